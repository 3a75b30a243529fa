/**
 * The file-system capability of one call: host functions for the guest's `Deno.readFile`,
 * `writeFile`, `readDir`, `stat`/`lstat`, `mkdir`, `remove` and `cwd`, bound to that call's grant.
 *
 * Argument shapes are checked at the bridge (sandbox/host/op-args.ts) before a handler runs.
 * Every use resolves the path to its real path (relative to the call's cwd, symlinks followed),
 * checks it against the grant right there, writes one audit record (allowed or denied, the path as
 * the guest wrote it), and only then runs the operation, on the resolved path. Reads and writes
 * are capped per operation. Errors come back as Deno's (`NotFound`, `AlreadyExists`, ...), naming
 * only the path the guest gave.
 */
import type { AuditSink, CallIdentity } from '../audit.ts';
import { GuestError } from '../errors.ts';
import { checkPathAccess, displayPath } from '../grants/check.ts';
import type { CheckedPath, PathAccess, PathCheck } from '../grants/check.ts';
import type { Grant } from '../grants/grant.ts';
import type { AsyncOps, SyncOps } from '../protocol.ts';
import { createCallScope } from './call-scope.ts';
import { nodeFileSystem, FileTooLargeError } from './file-system.ts';
import type { FileSystem } from './file-system.ts';
import { resolveError, toGuestFsError } from './fs-errors.ts';
import type { FsOperation } from './fs-errors.ts';

export interface FsCapabilityDeps {
  /** The call's working directory (absolute): relative paths resolve against it. */
  readonly cwd: string;
  readonly audit: AuditSink;
  /** Largest file one `readFile` may return, in bytes. */
  readonly maxReadBytes: number;
  /** Largest payload one `writeFile` may write, in bytes. */
  readonly maxWriteBytes: number;
  /** The operations themselves; the real file system unless a test stands in. */
  readonly fileSystem?: FileSystem | undefined;
}

type AsyncHandler<Op extends keyof AsyncOps> = (args: AsyncOps[Op]['args']) => Promise<AsyncOps[Op]['result']>;
type SyncHandler<Op extends keyof SyncOps> = (args: SyncOps[Op]['args']) => SyncOps[Op]['result'];

export interface FsHandlers {
  readonly readFile: AsyncHandler<'readFile'>;
  readonly writeFile: AsyncHandler<'writeFile'>;
  readonly readDir: AsyncHandler<'readDir'>;
  readonly stat: AsyncHandler<'stat'>;
  readonly mkdir: AsyncHandler<'mkdir'>;
  readonly remove: AsyncHandler<'remove'>;
  readonly cwd: SyncHandler<'cwd'>;
}

export interface BoundFs {
  readonly handlers: FsHandlers;
  /** Ends the binding: every handler throws CallError('aborted') from then on. */
  revoke(): void;
}

const DEFAULT_FILE_MODE = 0o666;
const DEFAULT_DIRECTORY_MODE = 0o777;

export function bindFs(grant: Grant, identity: CallIdentity, deps: FsCapabilityDeps): BoundFs {
  const scope = createCallScope(identity, deps.audit);
  const fileSystem = deps.fileSystem ?? nodeFileSystem;

  /** Resolve, check, audit; then run `operation` on the checked path, with Deno's errors. */
  async function use<Access extends PathAccess, Result>(
    op: string,
    access: Access,
    denoOperation: FsOperation,
    requested: unknown,
    followFinal: boolean,
    operation: (path: CheckedPath<Access>, requested: string) => Promise<Result>,
  ): Promise<Result> {
    scope.assertLive(op);
    if (typeof requested !== 'string') throw new GuestError('TypeError', `${op}: the path must be a string`);
    let checked: PathCheck<Access>;
    try {
      checked = await checkPathAccess(grant, access, requested, deps.cwd, { followFinal });
    } catch (error) {
      if (error instanceof GuestError && error.guestName === 'NotCapable') scope.record(access, requested, false, 'not granted');
      throw error;
    }
    scope.record(access, requested, true);
    if (checked.error !== undefined) throw resolveError(checked.error, denoOperation, requested);
    scope.assertLive(op);
    try {
      return await operation(checked.path, requested);
    } catch (error) {
      throw toGuestFsError(error, denoOperation, requested);
    }
  }

  const handlers: FsHandlers = {
    readFile: (args) => use('readFile', 'read', 'readfile', args.path, true, async (path, requested) => {
      try {
        return await fileSystem.readFile(path, deps.maxReadBytes);
      } catch (error) {
        if (error instanceof FileTooLargeError) throw readLimitError(requested, error);
        throw error;
      }
    }),

    writeFile: (args) => use('writeFile', 'write', 'writefile', args.path, true, async (path, requested) => {
      const data: unknown = args.data;
      if (!(data instanceof Uint8Array)) throw new GuestError('TypeError', 'writeFile: the data must be a Uint8Array');
      if (data.byteLength > deps.maxWriteBytes) {
        throw new GuestError('RangeError', `Writing ${data.byteLength} bytes to "${displayPath(requested)}" is over the write limit of ${deps.maxWriteBytes} bytes per file operation`);
      }
      await fileSystem.writeFile(path, data, {
        append: args.append,
        create: args.create,
        createNew: args.createNew,
        mode: (args.mode ?? DEFAULT_FILE_MODE) & 0o7777,
      });
      return null;
    }),

    readDir: (args) => use('readDir', 'read', 'readdir', args.path, true, (path) => fileSystem.readDir(path)),

    stat: (args) => {
      const follow = !args.lstat;
      return use('stat', 'read', follow ? 'stat' : 'lstat', args.path, follow, (path) => fileSystem.stat(path, follow));
    },

    // mkdir and remove act on the last component itself: a symlink there is not followed.
    mkdir: (args) => use('mkdir', 'write', 'mkdir', args.path, false, async (path) => {
      const mode = (args.mode ?? DEFAULT_DIRECTORY_MODE) & 0o7777;
      await fileSystem.mkdir(path, { recursive: args.recursive, mode });
      return null;
    }),

    remove: (args) => use('remove', 'write', 'remove', args.path, false, async (path) => {
      await fileSystem.remove(path, { recursive: args.recursive });
      return null;
    }),

    // Deno 2 answers Deno.cwd() without a read grant, so no check and nothing to audit.
    cwd: () => {
      scope.assertLive('cwd');
      return deps.cwd;
    },
  };

  return { handlers, revoke: scope.revoke };
}

function readLimitError(requested: string, error: FileTooLargeError): GuestError {
  const size = error.size === undefined ? 'larger than' : `${error.size} bytes, over`;
  return new GuestError('RangeError', `"${displayPath(requested)}" is ${size} the read limit of ${error.limit} bytes per file operation`);
}
