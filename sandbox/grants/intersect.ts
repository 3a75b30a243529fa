/**
 * The grant of one call: what the tool declares ∩ what the server policy allows for the caller
 * (∩ what the request narrows it to, when it does). A tool never gets more than the policy, however
 * it was written: `true ∩ list = list`, and lists meet entry by entry (the narrower entry remains:
 * the deeper path, the host with a port, the name inside a wildcard or subnet).
 */
import { minimizeNet, normalizeGrant } from './grant.ts';
import type { Grant, GrantValue, NormalizeOptions, PermissionSet } from './grant.ts';
import { intersectEnv } from './match-env.ts';
import { intersectNet } from './match-net.ts';
import { intersectPaths } from './match-path.ts';
import { formatNetDescriptor, parseNetDescriptor } from './net-descriptor.ts';

/**
 * Normalises the three inputs (relative paths against `options.cwd`) and intersects them.
 * `narrowing` undefined: the request did not narrow. A narrowing object follows Deno's flags like
 * the others: a permission it leaves out is not granted.
 * Throws InvalidGrantError when an input is malformed.
 */
export function resolveGrant(
  declared: PermissionSet,
  policy: PermissionSet,
  narrowing: PermissionSet | undefined,
  options: NormalizeOptions,
): Grant {
  const granted = intersectGrants(normalizeGrant(declared, options), normalizeGrant(policy, options));
  return narrowing === undefined ? granted : intersectGrants(granted, normalizeGrant(narrowing, options));
}

/** Pure intersection of two normalised grants. */
export function intersectGrants(a: Grant, b: Grant): Grant {
  return Object.freeze({
    net: intersectValues(a.net, b.net, intersectNetLists),
    read: intersectValues(a.read, b.read, intersectPaths),
    write: intersectValues(a.write, b.write, intersectPaths),
    env: intersectValues(a.env, b.env, intersectEnv),
  });
}

function intersectValues(
  a: GrantValue,
  b: GrantValue,
  intersectLists: (a: readonly string[], b: readonly string[]) => string[],
): GrantValue {
  if (a === true) return b;
  if (b === true) return a;
  return Object.freeze(intersectLists(a, b));
}

function intersectNetLists(a: readonly string[], b: readonly string[]): string[] {
  const result: string[] = [];
  for (const left of a) {
    for (const right of b) {
      const common = intersectNet(parseNetDescriptor(left, 'list'), parseNetDescriptor(right, 'list'));
      if (common !== undefined) result.push(formatNetDescriptor(common));
    }
  }
  return minimizeNet(result);
}
