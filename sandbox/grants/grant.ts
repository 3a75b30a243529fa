/**
 * The Grant: what one call may reach, per Deno permission (`net`, `read`, `write`, `env`), either
 * `true` (everything) or a list (an empty list: nothing). Grants are normalised once, when they are
 * built, so checks compare like with like:
 * - net: Deno's display form (`example.com`, `example.com:443`, `[::1]:8080`, `*.example.com`,
 *   `10.0.0.0/8`), lowercase, IPv4-mapped IPv6 folded to IPv4;
 * - read/write: absolute real paths (symlinks followed, `..` resolved, relative to a given cwd);
 * - env: names, or prefix patterns ending in `*`.
 *
 * The input side (`PermissionSet`) is what a tool declares in `permissions`, what a server policy
 * allows, and what a request narrows to, with Deno's flag semantics: `true` = all, `false` or
 * absent = none, a list = those entries.
 */
import type { PermissionName } from '../protocol.ts';
import { envEntryError, minimizeEnv } from './match-env.ts';
import { minimizePaths } from './match-path.ts';
import { netIncludes } from './match-net.ts';
import { formatNetDescriptor, NetSyntaxError, parseNetDescriptor, parseNetEntry } from './net-descriptor.ts';
import type { NetDescriptor } from './net-descriptor.ts';
import { resolveRealPathSync } from './real-path.ts';

export type { PermissionName } from '../protocol.ts';

export type GrantValue = true | readonly string[];

export interface Grant {
  readonly net: GrantValue;
  readonly read: GrantValue;
  readonly write: GrantValue;
  readonly env: GrantValue;
}

export type PermissionValue = boolean | readonly string[];

export type PermissionSet = { readonly [Name in PermissionName]?: PermissionValue | undefined };

export const PERMISSION_NAMES: readonly PermissionName[] = Object.freeze(['net', 'read', 'write', 'env']);

export const NO_GRANT: Grant = Object.freeze({
  net: Object.freeze([]),
  read: Object.freeze([]),
  write: Object.freeze([]),
  env: Object.freeze([]),
});

/**
 * A permission set that cannot be granted. `message` is Deno's own where Deno would refuse the same
 * flag (`invalid host 'a b': invalid char found in FQDN`); `permission` and `entry` say where.
 */
export class InvalidGrantError extends Error {
  readonly permission: string | undefined;
  readonly entry: string | undefined;

  constructor(message: string, permission?: string, entry?: string) {
    super(message);
    this.name = new.target.name;
    this.permission = permission;
    this.entry = entry;
  }
}

/** Lists meet entry by entry (quadratic), and requests are untrusted: keep them small. */
export const MAX_ENTRIES = 1000;

export interface NormalizeOptions {
  /** Absolute folder that relative read/write entries resolve against. */
  readonly cwd: string;
  /** Turns a path entry into an absolute real path; defaults to following symlinks on this host. */
  readonly resolvePath?: ((cwd: string, entry: string) => string) | undefined;
}

/**
 * Validates and normalises a permission set (often untrusted JSON: a tool's export, a request body).
 * Throws InvalidGrantError with a precise message. Idempotent: a Grant normalises to itself.
 */
export function normalizeGrant(input: unknown, options: NormalizeOptions): Grant {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidGrantError('Permissions must be an object with optional net, read, write and env keys.');
  }
  for (const [key, value] of Object.entries(input)) {
    if (!isPermissionName(key) && value !== false && value !== undefined) {
      throw new InvalidGrantError(`Unknown permission "${key}": Paddock grants only net, read, write and env.`, key);
    }
  }
  const record = input as Readonly<Record<string, unknown>>;
  const resolvePath = options.resolvePath ?? ((cwd: string, entry: string) => resolveRealPathSync(cwd, entry).path);
  return Object.freeze({
    net: normalizeValue('net', record.net, (entry) => parseNetEntry(entry).map(formatNetDescriptor), minimizeNet),
    read: normalizeValue('read', record.read, (entry) => [resolvePathEntry(entry, options.cwd, resolvePath)], minimizePaths),
    write: normalizeValue('write', record.write, (entry) => [resolvePathEntry(entry, options.cwd, resolvePath)], minimizePaths),
    env: normalizeValue('env', record.env, (entry) => [checkEnvEntry(entry)], minimizeEnv),
  });
}

function normalizeValue(
  permission: PermissionName,
  value: unknown,
  parseEntry: (entry: string) => string[],
  minimize: (entries: readonly string[]) => string[],
): GrantValue {
  if (value === true) return true;
  if (value === false || value === undefined) return Object.freeze([]);
  if (!Array.isArray(value)) {
    throw new InvalidGrantError(`Permission "${permission}" must be true, false or a list of strings.`, permission);
  }
  if (value.length > MAX_ENTRIES) {
    throw new InvalidGrantError(`Permission "${permission}" lists ${value.length} entries; at most ${MAX_ENTRIES} are allowed.`, permission);
  }
  const entries: string[] = [];
  for (const [index, entry] of (value as unknown[]).entries()) {
    if (typeof entry !== 'string') {
      throw new InvalidGrantError(`Permission "${permission}" entry ${index} must be a string.`, permission);
    }
    try {
      entries.push(...parseEntry(entry));
    } catch (error) {
      if (error instanceof InvalidGrantError || error instanceof NetSyntaxError) {
        throw new InvalidGrantError(error.message, permission, entry);
      }
      throw error;
    }
  }
  return Object.freeze(minimize(entries));
}

function resolvePathEntry(entry: string, cwd: string, resolvePath: (cwd: string, entry: string) => string): string {
  if (entry === '') throw new InvalidGrantError('Empty path is not allowed');
  if (entry.includes('\0')) throw new InvalidGrantError('file name contained an unexpected NUL byte');
  return resolvePath(cwd, entry);
}

function checkEnvEntry(entry: string): string {
  const problem = envEntryError(entry);
  if (problem !== undefined) throw new InvalidGrantError(problem);
  return entry;
}

/** Parsed net entries of a normalised grant list (memoised: checks parse the same frozen list often). */
export function netDescriptorsOf(list: readonly string[]): readonly NetDescriptor[] {
  let parsed = parsedNetLists.get(list);
  if (parsed === undefined) {
    parsed = list.map((entry) => parseNetDescriptor(entry, 'list'));
    if (Object.isFrozen(list)) parsedNetLists.set(list, parsed);
  }
  return parsed;
}

const parsedNetLists = new WeakMap<readonly string[], readonly NetDescriptor[]>();

/** Drops duplicates and entries another entry already includes (of two equivalent ones, the first stays). */
export function minimizeNet(entries: readonly string[]): string[] {
  const unique = [...new Set(entries)];
  const parsed = unique.map((entry) => parseNetDescriptor(entry, 'list'));
  const redundant = (self: NetDescriptor, index: number) => parsed.some((other, otherIndex) =>
    otherIndex !== index && netIncludes(other, self) && (otherIndex < index || !netIncludes(self, other)));
  return unique.filter((_entry, index) => {
    const self = parsed[index];
    return self !== undefined && !redundant(self, index);
  });
}

export function isPermissionName(name: string): name is PermissionName {
  return name === 'net' || name === 'read' || name === 'write' || name === 'env';
}
