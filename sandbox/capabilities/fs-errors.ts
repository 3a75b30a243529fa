/**
 * Node file-system errors as Deno reports them: Deno's error class and Rust's io::Error text,
 * `No such file or directory (os error 2): readfile 'notes.txt'`. The path is the one the guest
 * wrote (see `displayPath`), never the resolved real path, so nothing of the host's layout leaks
 * through a message. Any other error is left alone: the bridge turns it into a generic message.
 */
import { constants } from 'node:os';
import { GuestError } from '../errors.ts';
import { displayPath } from '../grants/check.ts';
import { errorCode } from '../grants/real-path.ts';

/** Deno's op names, as they appear after the colon in its messages. */
export type FsOperation = 'readfile' | 'writefile' | 'readdir' | 'stat' | 'lstat' | 'mkdir' | 'remove';

interface OsErrorShape {
  /** The Deno.errors class (or standard error) the guest sees. */
  readonly name: string;
  /** strerror(3), as Rust prints it. */
  readonly text: string;
}

// Deno's class for each errno (deno_error's io error mapping), checked against Deno 2.9 where a
// test can provoke the error; the texts are glibc's.
const OS_ERRORS: Readonly<Record<string, OsErrorShape>> = {
  ENOENT: { name: 'NotFound', text: 'No such file or directory' },
  EEXIST: { name: 'AlreadyExists', text: 'File exists' },
  EACCES: { name: 'PermissionDenied', text: 'Permission denied' },
  EPERM: { name: 'PermissionDenied', text: 'Operation not permitted' },
  EISDIR: { name: 'IsADirectory', text: 'Is a directory' },
  ENOTDIR: { name: 'NotADirectory', text: 'Not a directory' },
  ELOOP: { name: 'FilesystemLoop', text: 'Too many levels of symbolic links' },
  ENOTEMPTY: { name: 'Error', text: 'Directory not empty' },
  ENAMETOOLONG: { name: 'Error', text: 'File name too long' },
  EINVAL: { name: 'TypeError', text: 'Invalid argument' },
  EROFS: { name: 'Error', text: 'Read-only file system' },
  ENOSPC: { name: 'Error', text: 'No space left on device' },
  EDQUOT: { name: 'Error', text: 'Disk quota exceeded' },
  EFBIG: { name: 'Error', text: 'File too large' },
  EBUSY: { name: 'Error', text: 'Device or resource busy' },
  ETXTBSY: { name: 'Error', text: 'Text file busy' },
  EXDEV: { name: 'Error', text: 'Invalid cross-device link' },
  EMFILE: { name: 'Error', text: 'Too many open files' },
  ENFILE: { name: 'Error', text: 'Too many open files in system' },
  ENXIO: { name: 'Error', text: 'No such device or address' },
  EIO: { name: 'Error', text: 'Input/output error' },
  EAGAIN: { name: 'WouldBlock', text: 'Resource temporarily unavailable' },
  EINTR: { name: 'Interrupted', text: 'Interrupted system call' },
};

/**
 * Deno's error for an errno `code` met while running `operation` on the path the guest asked for.
 * `withPath: false` drops the `: op 'path'` suffix, as Deno does for errors it meets while
 * resolving the path of a readfile or writefile (before the open).
 */
export function osError(code: string, operation: FsOperation, requested: string, withPath = true): GuestError {
  if (code === 'ENUL') {
    return new GuestError('TypeError', `file name contained an unexpected NUL byte: ${operation} '${displayPath(requested)}'`);
  }
  const shape = OS_ERRORS[code] ?? { name: 'Error', text: code };
  const errno = (constants.errno as Readonly<Record<string, number | undefined>>)[code];
  const text = errno === undefined ? shape.text : `${shape.text} (os error ${errno})`;
  return new GuestError(shape.name, withPath ? `${text}: ${operation} '${displayPath(requested)}'` : text);
}

/** Maps a Node error thrown by an operation; anything without an errno code is rethrown as is. */
export function toGuestFsError(error: unknown, operation: FsOperation, requested: string): unknown {
  if (error instanceof GuestError) return error;
  const code = errorCode(error);
  return code !== undefined && /^E[A-Z0-9]+$/.test(code) ? osError(code, operation, requested) : error;
}

/**
 * An error met while resolving the path. Deno names the path in it, except for a readfile or
 * writefile, whose path resolution (before the open) reports without one; a missing file is the
 * open's to report, with the path.
 */
export function resolveError(code: string, operation: FsOperation, requested: string): GuestError {
  const withPath = code === 'ENUL' || code === 'ENOENT' || !(operation === 'readfile' || operation === 'writefile');
  return osError(code, operation, requested, withPath);
}
