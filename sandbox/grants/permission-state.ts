/**
 * `Deno.permissions.query` answered from a grant, as `deno run --no-prompt` with the equivalent
 * `--allow-*` flags answers it (checked against Deno 2.9):
 * - `granted` when the grant covers the descriptor (`{ name: 'net' }` alone only for `net: true`);
 * - `prompt` otherwise: Deno reports what it could still ask for, even when it never will;
 * - never `denied`, and `partial` is always false: those come from `--deny-*` flags, which grants
 *   do not have.
 * Names Deno knows but Paddock never grants (`run`, `sys`, `ffi`, `import`) answer `prompt`, as
 * they do under `deno run` without those flags. Paths are resolved to real paths first, exactly as
 * the checks at use do, so `granted` means the operation would pass the check.
 */
import { GuestError } from '../errors.ts';
import type { PermissionDescriptor } from '../protocol.ts';
import { checkEnv, checkPathAccess } from './check.ts';
import { netDescriptorsOf } from './grant.ts';
import type { Grant } from './grant.ts';
import { netCovers } from './match-net.ts';
import { NetSyntaxError, parseNetDescriptor } from './net-descriptor.ts';
import type { NetDescriptor } from './net-descriptor.ts';

export type PermissionStateName = 'granted' | 'prompt' | 'denied';

export interface PermissionStatus {
  readonly state: PermissionStateName;
  readonly partial: boolean;
}

const KNOWN_NAMES = new Set(['read', 'write', 'net', 'env', 'sys', 'run', 'ffi', 'import']);
const GRANTED: PermissionStatus = Object.freeze({ state: 'granted', partial: false });
const PROMPT: PermissionStatus = Object.freeze({ state: 'prompt', partial: false });

/**
 * Throws what Deno throws for a malformed descriptor: TypeError for an unknown name, URIError for a
 * host it cannot parse, Error for an empty path. Fields of the wrong type are ignored, as in Deno.
 */
export async function permissionState(
  grant: Grant,
  descriptor: PermissionDescriptor,
  options: { readonly cwd: string },
): Promise<PermissionStatus> {
  const name: unknown = descriptor.name;
  if (typeof name !== 'string' || !KNOWN_NAMES.has(name)) {
    throw new GuestError('TypeError', `The provided value "${String(name)}" is not a valid permission name`);
  }
  switch (name) {
    case 'net': {
      const host = stringField(descriptor.host);
      if (host === undefined) return grant.net === true ? GRANTED : PROMPT;
      return netHostGranted(grant, host) ? GRANTED : PROMPT;
    }
    case 'read':
    case 'write': {
      const path = stringField(descriptor.path);
      if (path === undefined) return grant[name] === true ? GRANTED : PROMPT;
      return (await passes(() => checkPathAccess(grant, name, path, options.cwd))) ? GRANTED : PROMPT;
    }
    case 'env': {
      const variable = stringField(descriptor.variable);
      if (variable === undefined) return grant.env === true ? GRANTED : PROMPT;
      return (await passes(() => { checkEnv(grant, variable); })) ? GRANTED : PROMPT;
    }
    default:
      return PROMPT;
  }
}

/** `host`, `host:port` or `[v6]:port`, parsed even under `net: true` (Deno parses first). */
function netHostGranted(grant: Grant, host: string): boolean {
  let query: NetDescriptor;
  try {
    query = parseNetDescriptor(host, 'query');
  } catch (error) {
    if (error instanceof NetSyntaxError) throw new GuestError('URIError', error.message);
    throw error;
  }
  return grant.net === true || netDescriptorsOf(grant.net).some((allow) => netCovers(allow, query));
}

async function passes(check: () => unknown): Promise<boolean> {
  try {
    await check();
    return true;
  } catch (error) {
    if (error instanceof GuestError && error.guestName === 'NotCapable') return false;
    throw error;
  }
}

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
