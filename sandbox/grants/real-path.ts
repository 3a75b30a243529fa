/**
 * Resolves a path the guest asked for to the real path the operating system would use, so that a
 * grant check sees where a symlink or `..` really leads. Walks component by component like the
 * kernel does: a symlink is replaced by its target (relative targets against the link's folder),
 * `..` goes to the parent of the real folder reached so far. Once a component does not exist, the
 * rest is appended: a file that is about to be created resolves under its deepest existing (real)
 * parent. The operation then runs on the resolved path, never on the path as asked, so what was
 * checked is what is used (short of another process swapping a component in between).
 *
 * The walk is written once as a generator of file-system probes, driven synchronously (grant
 * parsing) or asynchronously (checks at each use).
 */
import { lstatSync, readlinkSync } from 'node:fs';
import { lstat, readlink } from 'node:fs/promises';
import path from 'node:path/posix';

/** How far the walk got. `path` is absolute, normalized, and contains no symlink up to `missingFrom`. */
export interface ResolvedPath {
  readonly path: string;
  /**
   * Set when the walk stopped at a component it could not examine (`ENOTDIR`, `EACCES`, `ELOOP`,
   * `ENAMETOOLONG`; `ENOENT` for `..` past a missing component; `ENUL` for a NUL byte): `path` is
   * then lexical past that point, and the operation must not run: it would fail with this code.
   */
  readonly error: string | undefined;
}

export interface ResolveOptions {
  /** False for operations on a link itself (lstat, remove, mkdir): the final symlink is not followed. */
  readonly followFinal: boolean;
}

// Linux gives up after 40 symlinks in one lookup (ELOOP); so does the walk.
const MAX_SYMLINKS = 40;

type Probe = { readonly kind: 'lstat'; readonly path: string } | { readonly kind: 'readlink'; readonly path: string };
type ProbeAnswer =
  | { readonly kind: 'symlink' }
  | { readonly kind: 'directory' }
  | { readonly kind: 'other' }
  | { readonly kind: 'missing' }
  | { readonly kind: 'error'; readonly code: string }
  | { readonly kind: 'target'; readonly target: string };

function* walk(cwd: string, requested: string, options: ResolveOptions): Generator<Probe, ResolvedPath, ProbeAnswer> {
  if (!path.isAbsolute(cwd)) throw new TypeError(`The working directory must be absolute, got "${cwd}".`);
  const full = path.isAbsolute(requested) ? requested : `${cwd}/${requested}`;
  // The OS refuses NUL bytes in paths; nothing to probe, but the lexical path still decides the grant check.
  if (full.includes('\0')) return { path: path.resolve(full), error: 'ENUL' };
  // A trailing slash asks for a directory and follows a final symlink, as in POSIX.
  const wantsDirectory = /\/\.?$/.test(requested);
  const followFinal = options.followFinal || wantsDirectory;
  const pending = full.split('/').filter((part) => part !== '').reverse();
  let current = '/';
  let lastKind: ProbeAnswer['kind'] = 'directory';
  let symlinks = 0;
  const stopAt = (candidate: string, error: string | undefined): ResolvedPath =>
    ({ path: path.resolve(candidate, ...[...pending].reverse()), error });

  while (pending.length > 0) {
    const component = pending.pop() ?? '';
    if (component === '.') continue;
    if (component === '..') {
      current = path.dirname(current);
      lastKind = 'directory';
      continue;
    }
    const candidate = path.join(current, component);
    const answer = yield { kind: 'lstat', path: candidate };
    // Past a missing component the OS cannot walk `..` back up, and collapsing it lexically could
    // lead through an existing symlink unchecked: report what the OS would (ENOENT) instead.
    if (answer.kind === 'missing') return stopAt(candidate, pending.includes('..') ? 'ENOENT' : undefined);
    if (answer.kind === 'error') return stopAt(candidate, answer.code);
    if (answer.kind === 'symlink' && (pending.length > 0 || followFinal)) {
      symlinks += 1;
      if (symlinks > MAX_SYMLINKS) return stopAt(candidate, 'ELOOP');
      const link = yield { kind: 'readlink', path: candidate };
      if (link.kind !== 'target') return stopAt(candidate, link.kind === 'error' ? link.code : undefined);
      if (link.target.startsWith('/')) current = '/';
      pending.push(...link.target.split('/').filter((part) => part !== '').reverse());
      continue;
    }
    current = candidate;
    lastKind = answer.kind;
  }
  if (wantsDirectory && lastKind !== 'directory') return { path: current, error: 'ENOTDIR' };
  return { path: current, error: undefined };
}

export function resolveRealPathSync(cwd: string, requested: string, options: ResolveOptions = { followFinal: true }): ResolvedPath {
  const steps = walk(cwd, requested, options);
  let step = steps.next();
  while (step.done !== true) step = steps.next(probeSync(step.value));
  return step.value;
}

export async function resolveRealPath(cwd: string, requested: string, options: ResolveOptions = { followFinal: true }): Promise<ResolvedPath> {
  const steps = walk(cwd, requested, options);
  let step = steps.next();
  while (step.done !== true) step = steps.next(await probe(step.value));
  return step.value;
}

function probeSync(request: Probe): ProbeAnswer {
  try {
    if (request.kind === 'readlink') return { kind: 'target', target: readlinkSync(request.path) };
    const info = lstatSync(request.path);
    return info.isSymbolicLink() ? { kind: 'symlink' } : info.isDirectory() ? { kind: 'directory' } : { kind: 'other' };
  } catch (error) {
    return failedProbe(error);
  }
}

async function probe(request: Probe): Promise<ProbeAnswer> {
  try {
    if (request.kind === 'readlink') return { kind: 'target', target: await readlink(request.path) };
    const info = await lstat(request.path);
    return info.isSymbolicLink() ? { kind: 'symlink' } : info.isDirectory() ? { kind: 'directory' } : { kind: 'other' };
  } catch (error) {
    return failedProbe(error);
  }
}

function failedProbe(error: unknown): ProbeAnswer {
  const code = errorCode(error);
  if (code === 'ENOENT') return { kind: 'missing' };
  if (code !== undefined) return { kind: 'error', code };
  throw error;
}

export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}
