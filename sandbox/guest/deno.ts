/** The `Deno` namespace subset of SPEC §2, over the host's fs/env/permission ops. */
import type { AsyncOp, AsyncOps, DirEntryInfo, FileInfo, PermissionDescriptor } from '../protocol.ts';
import { hostCall, hostCancel, hostRequest } from './bridge.ts';
import { TextDecoder, bufferSourceBytes, copyBytes, utf8Encode } from './encoding.ts';
import { abortError, denoErrors } from './errors.ts';
import type { AbortSignal } from './events.ts';
import { inspect as inspectValue, type InspectOptions } from './inspect.ts';
import {
  DateCtor, ObjectCreate, ObjectDefineProperty, ObjectFreeze, ObjectHasOwn, ObjectKeys, PromisePrototypeThen,
  PromiseReject, StringPrototypeIncludes, SymbolAsyncIterator, TypeErrorCtor, withResolvers, toDOMString, toBoolean,
  toNumber,
} from './primordials.ts';
import { URL } from './url.ts';

type PathLike = string | URL;

function pathFromUrl(url: URL): string {
  if (url.protocol !== 'file:') throw new TypeErrorCtor('Must be a file URL.');
  if (url.hostname !== '') throw new TypeErrorCtor('Host must be empty');
  return decodeURIComponent(url.pathname);
}

function toPath(path: unknown): string {
  if (path instanceof URL) return pathFromUrl(path);
  if (typeof path !== 'string') throw new TypeErrorCtor('The path must be a string or a file URL.');
  if (StringPrototypeIncludes(path, '\0')) throw new TypeErrorCtor('file name contained an unexpected NUL byte');
  return path;
}

/** Runs an async op; an `AbortSignal` cancels it on the host and rejects at once with the signal's reason. */
function run<Op extends AsyncOp>(op: Op, args: AsyncOps[Op]['args'], signal?: AbortSignal | null): Promise<AsyncOps[Op]['result']> {
  if (signal !== undefined && signal !== null && signal.aborted) return PromiseReject(signal.reason);
  const request = hostRequest(op, args);
  if (signal === undefined || signal === null) return request.promise;
  const { promise, resolve, reject } = withResolvers<AsyncOps[Op]['result']>();
  let done = false;
  const onAbort = (): void => {
    if (done) return;
    done = true;
    hostCancel(request.id);
    reject(signal.reason === undefined ? abortError() : signal.reason);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  void PromisePrototypeThen(request.promise, (value) => {
    if (done) return;
    done = true;
    signal.removeEventListener('abort', onAbort);
    resolve(value);
  }, (error: unknown) => {
    if (done) return;
    done = true;
    signal.removeEventListener('abort', onAbort);
    reject(error);
  });
  return promise;
}

const lossyUtf8 = new TextDecoder();

interface ReadOptions { signal?: AbortSignal }
interface WriteOptions { append?: boolean; create?: boolean; createNew?: boolean; mode?: number; signal?: AbortSignal }

async function readFile(path: PathLike, options: ReadOptions = {}): Promise<Uint8Array> {
  const bytes = await run('readFile', { path: toPath(path) }, options.signal);
  return bytes;
}

async function readTextFile(path: PathLike, options: ReadOptions = {}): Promise<string> {
  return lossyUtf8.decode(await readFile(path, options));
}

async function writeFile(path: PathLike, data: Uint8Array, options: WriteOptions = {}): Promise<void> {
  const bytes = copyBytes(bufferSourceBytes(data, 'writeFile'));
  await run('writeFile', {
    path: toPath(path),
    data: bytes,
    append: toBoolean(options.append),
    create: options.create === undefined ? true : toBoolean(options.create),
    createNew: toBoolean(options.createNew),
    mode: typeof options.mode === 'number' ? options.mode : null,
  }, options.signal);
}

async function writeTextFile(path: PathLike, data: string, options: WriteOptions = {}): Promise<void> {
  await writeFile(path, utf8Encode(toDOMString(data)), options);
}

interface DirEntry { name: string; isFile: boolean; isDirectory: boolean; isSymlink: boolean }

function readDir(path: PathLike): AsyncIterable<DirEntry> {
  const target = toPath(path);
  return {
    [SymbolAsyncIterator]: () => {
      let entries: DirEntryInfo[] | null = null;
      let index = 0;
      return {
        next: async (): Promise<IteratorResult<DirEntry>> => {
          entries ??= await run('readDir', { path: target });
          if (index >= entries.length) return { done: true, value: undefined };
          const entry = entries[index++] as DirEntryInfo;
          return {
            done: false,
            value: { name: toDOMString(entry.name), isFile: toBoolean(entry.isFile), isDirectory: toBoolean(entry.isDirectory), isSymlink: toBoolean(entry.isSymlink) },
          };
        },
        [SymbolAsyncIterator]() { return this; },
      };
    },
  };
}

function toDate(ms: number | null): Date | null {
  return typeof ms === 'number' ? new DateCtor(ms) : null;
}

function fileInfo(info: FileInfo): Record<string, unknown> {
  return {
    isFile: toBoolean(info.isFile),
    isDirectory: toBoolean(info.isDirectory),
    isSymlink: toBoolean(info.isSymlink),
    size: toNumber(info.size),
    mtime: toDate(info.mtime),
    atime: toDate(info.atime),
    birthtime: toDate(info.birthtime),
    ctime: null,
    // The protocol carries no device/inode data; Deno's key order is kept so output compares.
    dev: 0,
    mode: typeof info.mode === 'number' ? info.mode : null,
    ino: null,
    nlink: null,
    uid: null,
    gid: null,
    rdev: null,
    blksize: null,
    blocks: null,
    isBlockDevice: null,
    isCharDevice: null,
    isFifo: null,
    isSocket: null,
  };
}

async function stat(path: PathLike): Promise<Record<string, unknown>> {
  return fileInfo(await run('stat', { path: toPath(path), lstat: false }));
}

async function lstat(path: PathLike): Promise<Record<string, unknown>> {
  return fileInfo(await run('stat', { path: toPath(path), lstat: true }));
}

async function mkdir(path: PathLike, options: { recursive?: boolean; mode?: number } = {}): Promise<void> {
  await run('mkdir', { path: toPath(path), recursive: toBoolean(options.recursive), mode: typeof options.mode === 'number' ? options.mode : null });
}

async function remove(path: PathLike, options: { recursive?: boolean } = {}): Promise<void> {
  await run('remove', { path: toPath(path), recursive: toBoolean(options.recursive) });
}

function checkEnvKey(key: unknown): string {
  const name = toDOMString(key);
  if (name === '') throw new TypeErrorCtor('Key is an empty string.');
  if (StringPrototypeIncludes(name, '=') || StringPrototypeIncludes(name, '\0')) throw new TypeErrorCtor(`Key contains invalid characters: "${name}"`);
  return name;
}

function envGet(key: string): string | undefined {
  const name = toDOMString(key);
  // As in Deno, the grant is checked (on the host) before the name is validated.
  const value = hostCall('envGet', { name });
  checkEnvKey(name);
  return typeof value === 'string' ? value : undefined;
}

const env = ObjectFreeze({
  get: envGet,
  has(key: string): boolean {
    return envGet(key) !== undefined;
  },
  toObject(): Record<string, string> {
    const values: unknown = hostCall('envToObject', {});
    const copy: Record<string, string> = {};
    if (typeof values === 'object' && values !== null) {
      const keys = ObjectKeys(values);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        const value = (values as Record<string, unknown>)[key];
        if (typeof value === 'string') ObjectDefineProperty(copy, key, { value, writable: true, enumerable: true, configurable: true });
      }
    }
    return copy;
  },
  set(_key: string, _value: string): void {
    throw new denoErrors.NotSupported('Deno.env.set is not available inside a Paddock isolate.');
  },
  delete(_key: string): void {
    throw new denoErrors.NotSupported('Deno.env.delete is not available inside a Paddock isolate.');
  },
});

const PERMISSION_NAMES = ['read', 'write', 'net', 'env', 'sys', 'run', 'ffi', 'import'];

async function query(input: unknown): Promise<{ state: string; partial: boolean; onchange: null }> {
  if (typeof input !== 'object' || input === null) throw new TypeErrorCtor('The permission descriptor must be an object.');
  const descriptor = input as PermissionDescriptor;
  const name = toDOMString(descriptor.name);
  let known = false;
  for (let i = 0; i < PERMISSION_NAMES.length; i++) if (PERMISSION_NAMES[i] === name) known = true;
  if (!known) throw new TypeErrorCtor(`The provided value "${name}" is not a valid permission name`);
  const args: PermissionDescriptor = { name };
  if (ObjectHasOwn(descriptor, 'host') && descriptor.host !== undefined) args.host = toDOMString(descriptor.host);
  if (ObjectHasOwn(descriptor, 'path') && descriptor.path !== undefined) args.path = toPath(descriptor.path);
  if (ObjectHasOwn(descriptor, 'variable') && descriptor.variable !== undefined) args.variable = toDOMString(descriptor.variable);
  const status = await run('permissionsQuery', args);
  return ObjectFreeze({ state: toDOMString(status.state), partial: toBoolean(status.partial), onchange: null });
}

export function createDeno(): object {
  const deno = ObjectCreate(null) as Record<string, unknown>;
  const define = (name: string, value: unknown): void => {
    ObjectDefineProperty(deno, name, { value, writable: false, enumerable: true, configurable: false });
  };
  define('readFile', readFile);
  define('readTextFile', readTextFile);
  define('writeFile', writeFile);
  define('writeTextFile', writeTextFile);
  define('readDir', readDir);
  define('stat', stat);
  define('lstat', lstat);
  define('mkdir', mkdir);
  define('remove', remove);
  define('env', env);
  define('cwd', function cwd(): string { return toDOMString(hostCall('cwd', {})); });
  define('permissions', ObjectFreeze({ query }));
  define('errors', denoErrors);
  // Named by its property (an anonymous function takes the key's name), not by a function expression:
  // the bundler would rename that one, since it shadows the runtime's own inspect.
  const { inspect } = { inspect: (value: unknown, options: Partial<InspectOptions> = {}): string => inspectValue(value, options) };
  define('inspect', inspect);
  // The Deno API level Paddock emulates; there is no Deno binary behind it.
  define('version', ObjectFreeze({ deno: '2.0.0', v8: '', typescript: '' }));
  define('noColor', true);
  return ObjectFreeze(deno);
}
