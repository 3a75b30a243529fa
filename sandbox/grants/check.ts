/**
 * Grant checks at the point of use. Each throws Deno's NotCapable error (a GuestError) when the
 * grant does not cover the target, and returns the target in the form the operation must use.
 * Audit records are the capability layer's job (sandbox/capabilities), not these functions'.
 */
import path from 'node:path/posix';
import { GuestError } from '../errors.ts';
import { netDescriptorsOf } from './grant.ts';
import type { Grant } from './grant.ts';
import { ipEquals, parseIp, subnetContains } from './ip-address.ts';
import { envCovers } from './match-env.ts';
import { netCovers } from './match-net.ts';
import { pathCovers } from './match-path.ts';
import { formatNetDescriptor, NetSyntaxError, parseHost } from './net-descriptor.ts';
import type { NetDescriptor } from './net-descriptor.ts';
import { notCapable } from './not-capable.ts';
import { resolveRealPath } from './real-path.ts';

declare const checkedBrand: unique symbol;

export type PathAccess = 'read' | 'write';

/** A real path that passed the grant check for `Access`. Only the checks below create one. */
export type CheckedPath<Access extends PathAccess = PathAccess> = string & { readonly [checkedBrand]: Access };

export interface PathCheck<Access extends PathAccess> {
  readonly path: CheckedPath<Access>;
  /**
   * An errno code (`ENOTDIR`, `EACCES`, `ELOOP`, `ENAMETOOLONG`, `ENOENT`, `ENUL`) when resolving
   * stopped at a component inside the grant that could not be examined: the operation would fail
   * with it, so report it rather than run the operation.
   */
  readonly error: string | undefined;
}

export interface PathCheckOptions {
  /** False for operations on a symlink itself (lstat, remove, mkdir). @defaultValue true */
  readonly followFinal?: boolean | undefined;
}

/**
 * Resolves `requested` (relative to `cwd`) to its real path, then checks it against the grant.
 * Throws NotCapable naming the path as Deno does (see `displayPath`), or Deno's error for an empty
 * path.
 */
export async function checkPathAccess<Access extends PathAccess>(
  grant: Grant,
  access: Access,
  requested: string,
  cwd: string,
  options: PathCheckOptions = {},
): Promise<PathCheck<Access>> {
  if (requested === '') throw new GuestError('Error', 'Empty path is not allowed');
  const resolved = await resolveRealPath(cwd, requested, { followFinal: options.followFinal ?? true });
  const allowed = grant[access];
  if (allowed !== true && !allowed.some((granted) => pathCovers(granted, resolved.path))) {
    throw notCapable(access, displayPath(requested));
  }
  return { path: resolved.path as CheckedPath<Access>, error: resolved.error };
}

/** The real path to read, once the read grant covers it. */
export async function checkRead(grant: Grant, requested: string, cwd: string, options?: PathCheckOptions): Promise<CheckedPath<'read'>> {
  return (await checkPathAccess(grant, 'read', requested, cwd, options)).path;
}

/** The real path to write (it may not exist yet: then its deepest existing parent was resolved). */
export async function checkWrite(grant: Grant, requested: string, cwd: string, options?: PathCheckOptions): Promise<CheckedPath<'write'>> {
  return (await checkPathAccess(grant, 'write', requested, cwd, options)).path;
}

/**
 * How Deno names a path in messages: a relative path as the program wrote it, an absolute one
 * normalised. Never the resolved real path, so no host path the program did not name leaks.
 */
export function displayPath(requested: string): string {
  return path.isAbsolute(requested) ? path.resolve(requested) : requested;
}

/**
 * Checks a connection to `hostname:port` (a URL's hostname, `[v6]` or bare, any case). Returns
 * Deno's display form of the target (`example.com:443`), which is also the NotCapable target.
 * Throws Deno's URIError for a host Deno would not parse (only when the grant is a list: with
 * `net: true` Deno does not look).
 */
export function checkNet(grant: Grant, hostname: string, port: number): string {
  if (grant.net === true) return lenientNetTarget(hostname, port);
  const target = netQuery(hostname, port);
  const display = formatNetDescriptor(target);
  if (!netDescriptorsOf(grant.net).some((allow) => netCovers(allow, target))) throw notCapable('net', display);
  return display;
}

/** Deno's display form of a connection target; throws Deno's URIError for an unparsable host. */
export function netTarget(hostname: string, port: number): string {
  return formatNetDescriptor(netQuery(hostname, port));
}

function netQuery(hostname: string, port: number): NetDescriptor {
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new GuestError('TypeError', `Invalid port: ${port}`);
  try {
    return { host: parseHost(hostname, 'query'), port };
  } catch (error) {
    if (error instanceof NetSyntaxError) throw new GuestError('URIError', error.message);
    throw error;
  }
}

function lenientNetTarget(hostname: string, port: number): string {
  try {
    return netTarget(hostname, port);
  } catch {
    return `${hostname}:${port}`;
  }
}

/**
 * For the network capability's address guard: loopback, private, link-local and metadata addresses
 * are reachable only when the grant names that literal address (or a subnet holding it), with a
 * matching port or none. `net: true` and host names do not count: they never name an address.
 * `ip` may be bracketed, carry a zone, or be IPv4-mapped IPv6.
 */
export function isLiteralAddressGranted(grant: Grant, ip: string, port: number): boolean {
  if (grant.net === true) return false;
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const percent = bare.indexOf('%');
  const address = parseIp(percent < 0 ? bare : bare.slice(0, percent));
  if (address === undefined) return false;
  return netDescriptorsOf(grant.net).some((allow) => {
    if (allow.port !== undefined && allow.port !== port) return false;
    if (allow.host.kind === 'ip') return ipEquals(allow.host.ip, address);
    if (allow.host.kind === 'subnet') return subnetContains(allow.host.subnet, address);
    return false;
  });
}

/** Throws NotCapable unless the grant covers the variable `name` (as the program wrote it). */
export function checkEnv(grant: Grant, name: string): void {
  if (grant.env === true) return;
  if (!grant.env.some((entry) => envCovers(entry, name))) throw notCapable('env', name);
}
