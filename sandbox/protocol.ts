/**
 * The contract between guest code (sandbox/guest, runs inside an isolate) and the host side of a
 * sandbox worker. Guest code may import only this file from outside sandbox/guest, so it holds
 * types and plain constants, nothing that runs host code.
 *
 * Crossing rules: every value crosses by copy (isolated-vm's structured copy): plain objects,
 * arrays, strings, numbers, booleans, null, Uint8Array. No functions, no References.
 *
 * Two doors, captured by the guest bootstrap and then deleted from the global object:
 * - `request(op, args) -> id`: starts an asynchronous host operation. The host later calls the
 *   guest's settle function `(id, outcome: BridgeOutcome)` exactly once.
 * - `call(op, args) -> BridgeOutcome`: a synchronous host operation (env, cwd, random bytes, log).
 * - `cancel(id)`: asks the host to abandon an asynchronous operation (an aborted fetch or timer);
 *   the host still settles it, with an AbortError.
 */

/** An error as the guest rebuilds it: only a vetted name and message ever cross, never a host stack or object. */
export interface BridgeError {
  /**
   * A `Deno.errors` class name (`NotCapable`, `NotFound`, `AlreadyExists`, `PermissionDenied`,
   * `IsADirectory`, `NotADirectory`, `InvalidData`, `TimedOut`, `Interrupted`, `BadResource`, `Http`)
   * or a standard one (`TypeError`, `RangeError`, `AbortError`, `Error`).
   */
  name: string;
  message: string;
  /** Deno puts the detail of a network failure in `cause` (`TypeError: fetch failed`); rebuilt as the error's cause. */
  cause?: { name: string; message: string };
}

export type BridgeOutcome<T = unknown> = { ok: true; value: T } | { ok: false; error: BridgeError };

export type HttpHeaders = [name: string, value: string][];

export interface FetchArgs {
  url: string;
  method: string;
  headers: HttpHeaders;
  body: Uint8Array | null;
  redirect: 'follow' | 'manual' | 'error';
}

export interface FetchResult {
  status: number;
  statusText: string;
  headers: HttpHeaders;
  /** URL of the final response, after redirects. */
  url: string;
  redirected: boolean;
  body: Uint8Array;
}

export interface FileInfo {
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
  size: number;
  /** Milliseconds since the epoch, or null where the platform does not say. */
  mtime: number | null;
  atime: number | null;
  birthtime: number | null;
  mode: number | null;
}

export interface DirEntryInfo {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
}

export type PermissionName = 'net' | 'read' | 'write' | 'env';

export interface PermissionDescriptor {
  /** A permission name; anything else is answered with Deno's TypeError. */
  name: string;
  /** net */
  host?: string;
  /** read / write */
  path?: string;
  /** env */
  variable?: string;
}

/** Asynchronous operations: `request(op, args)`; the settle outcome carries `result`. */
export interface AsyncOps {
  fetch: { args: FetchArgs; result: FetchResult };
  readFile: { args: { path: string }; result: Uint8Array };
  writeFile: { args: { path: string; data: Uint8Array; append: boolean; create: boolean; createNew: boolean; mode: number | null }; result: null };
  readDir: { args: { path: string }; result: DirEntryInfo[] };
  stat: { args: { path: string; lstat: boolean }; result: FileInfo };
  mkdir: { args: { path: string; recursive: boolean; mode: number | null }; result: null };
  remove: { args: { path: string; recursive: boolean }; result: null };
  permissionsQuery: { args: PermissionDescriptor; result: { state: 'granted' | 'prompt' | 'denied'; partial: boolean } };
  /** Timers: settles after `ms` (setTimeout/setInterval are built on it). */
  sleep: { args: { ms: number }; result: null };
  /** ctx.update(text): a partial result streamed to the caller. */
  update: { args: { text: string }; result: null };
}

/** Synchronous operations: `call(op, args)` returns the outcome at once. */
export interface SyncOps {
  envGet: { args: { name: string }; result: string | null };
  envToObject: { args: Record<string, never>; result: Record<string, string> };
  cwd: { args: Record<string, never>; result: string };
  randomBytes: { args: { length: number }; result: Uint8Array };
  log: { args: { level: 'debug' | 'info' | 'warn' | 'error'; text: string }; result: null };
}

export type AsyncOp = keyof AsyncOps;
export type SyncOp = keyof SyncOps;

/** Upper bound on `randomBytes.length`, as in Web Crypto's getRandomValues (65536 bytes). */
export const MAX_RANDOM_BYTES = 65_536;

/** The names under which the host installs the doors; the bootstrap deletes them before user code runs. */
export const BRIDGE_GLOBALS = {
  request: '__paddock_request',
  call: '__paddock_call',
  cancel: '__paddock_cancel',
  /** Defined by the guest; the host holds a Reference to it and calls it to settle requests. */
  settle: '__paddock_settle',
} as const;

/** What a tool module's default export returns, as the guest normalizes it before it crosses. */
export interface GuestToolResult {
  content: string;
  isError: boolean;
  metadata: Record<string, unknown> | null;
  terminate: boolean;
}
