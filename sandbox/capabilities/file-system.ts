/**
 * The file operations the fs capability performs, on paths that already passed the grant check
 * (`CheckedPath`: the type says which check). An interface so tests can stand in errors a root
 * test run cannot provoke; `nodeFileSystem` is the real one.
 *
 * Opens add O_NOFOLLOW (the path is already resolved, so a symlink appearing at its end since the
 * check is refused, not followed) and O_NONBLOCK (a FIFO must not park a thread-pool thread).
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rm, rmdir, stat, unlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import type { CheckedPath } from '../grants/check.ts';
import type { DirEntryInfo, FileInfo } from '../protocol.ts';

export interface WriteOptions {
  readonly append: boolean;
  readonly create: boolean;
  readonly createNew: boolean;
  /** Permission bits for a file this write creates. */
  readonly mode: number;
}

export interface FileSystem {
  /** Throws FileTooLargeError past `maxBytes`, whatever the file claims its size is. */
  readFile(path: CheckedPath<'read'>, maxBytes: number): Promise<Uint8Array>;
  writeFile(path: CheckedPath<'write'>, data: Uint8Array, options: WriteOptions): Promise<void>;
  readDir(path: CheckedPath<'read'>): Promise<DirEntryInfo[]>;
  /** `follow: false` describes a symlink itself (lstat). */
  stat(path: CheckedPath<'read'>, follow: boolean): Promise<FileInfo>;
  mkdir(path: CheckedPath<'write'>, options: { readonly recursive: boolean; readonly mode: number }): Promise<void>;
  /** A file, a symlink (never its target) or an empty directory; a whole tree with `recursive`. */
  remove(path: CheckedPath<'write'>, options: { readonly recursive: boolean }): Promise<void>;
}

export class FileTooLargeError extends Error {
  /** The size the file reports, when reading stopped because of it. */
  readonly size: number | undefined;
  readonly limit: number;

  constructor(limit: number, size: number | undefined) {
    super(`File is larger than ${limit} bytes.`);
    this.name = new.target.name;
    this.limit = limit;
    this.size = size;
  }
}

const READ_CHUNK_BYTES = 65_536;

export const nodeFileSystem: FileSystem = {
  async readFile(path, maxBytes) {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      // A folder reports a size too; reading it below fails with EISDIR, as it should.
      const size = info.isFile() ? info.size : 0;
      if (size > maxBytes) throw new FileTooLargeError(maxBytes, size);
      // The reported size is a hint (/proc files say 0, files grow): read until EOF, at most maxBytes + 1.
      let buffer = new Uint8Array(Math.min(Math.max(size, READ_CHUNK_BYTES), maxBytes + 1));
      let total = 0;
      for (;;) {
        if (total === buffer.length) {
          const grown = new Uint8Array(Math.min(buffer.length * 2, maxBytes + 1));
          grown.set(buffer);
          buffer = grown;
        }
        const { bytesRead } = await handle.read(buffer, total, buffer.length - total, null);
        if (bytesRead === 0) break;
        total += bytesRead;
        if (total > maxBytes) throw new FileTooLargeError(maxBytes, undefined);
      }
      return buffer.slice(0, total);
    } finally {
      await handle.close();
    }
  },

  async writeFile(path, data, options) {
    const { O_WRONLY, O_APPEND, O_TRUNC, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;
    let flags = O_WRONLY | O_NOFOLLOW | O_NONBLOCK | (options.append ? O_APPEND : O_TRUNC);
    if (options.createNew) flags |= O_CREAT | O_EXCL;
    else if (options.create) flags |= O_CREAT;
    const handle = await open(path, flags, options.mode);
    try {
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
  },

  async readDir(path) {
    const entries = await readdir(path, { withFileTypes: true });
    return entries.map((entry) => ({
      name: entry.name,
      isFile: entry.isFile(),
      isDirectory: entry.isDirectory(),
      isSymlink: entry.isSymbolicLink(),
    }));
  },

  async stat(path, follow) {
    return fileInfo(follow ? await stat(path) : await lstat(path));
  },

  async mkdir(path, options) {
    await mkdir(path, { recursive: options.recursive, mode: options.mode });
  },

  async remove(path, options) {
    const info = await lstat(path);
    if (!info.isDirectory()) await unlink(path);
    else if (options.recursive) await rm(path, { recursive: true, force: false });
    else await rmdir(path);
  },
};

function fileInfo(info: Stats): FileInfo {
  return {
    isFile: info.isFile(),
    isDirectory: info.isDirectory(),
    isSymlink: info.isSymbolicLink(),
    size: info.size,
    mtime: Math.trunc(info.mtimeMs),
    atime: Math.trunc(info.atimeMs),
    // Node reports 0 where the file system keeps no birth time; Deno says null.
    birthtime: info.birthtimeMs > 0 ? Math.trunc(info.birthtimeMs) : null,
    mode: info.mode,
  };
}
