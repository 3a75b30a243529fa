/**
 * Runs the user's module for the host: a tool call (`default(params, ctx)`, result normalized to a
 * GuestToolResult) or a code_exec snippet (the awaited default export as JSON-safe data). Errors
 * come back as `{ error: { name, message } }` values, never as rejections, so the host can tell a
 * tool's own failure from a failure of the bridge.
 */
import type { GuestToolResult } from '../protocol.ts';
import { cancelAllRequests, hostRequest } from './bridge.ts';
import { DOMException } from './errors.ts';
import { AbortController } from './events.ts';
import {
  ArrayIsArray, JSONParse, JSONStringify, ObjectFreeze, ObjectHasOwn, ObjectPrototypeToString, ObjectSetPrototypeOf, PromisePrototypeThen,
  PromiseResolve, ReflectApply, ReflectGetOwnPropertyDescriptor, TypeErrorCtor, globalThisRef, withResolvers, toDOMString,
} from './primordials.ts';
import { clearAllTimers } from './timers.ts';
import { onUncaught } from './uncaught.ts';

export type InvokeInput =
  | { kind: 'tool'; params: unknown; callId: string; sessionId: string | null }
  | { kind: 'exec' }
  | { kind: 'describe' };

export interface InvokeError { error: { name: string; message: string } }
export type InvokeOutput = GuestToolResult | { result: unknown } | InvokeError;

const MODULE_GLOBAL = '__paddock_module';

/**
 * How a thrown value is reported, as the Deno runner (scripts/deno-run.ts) reports it: its `name`
 * (else `Error`) and its `message` (else the value as a string), so `throw "x"` and
 * `throw { code: 7 }` read `Error: x` and `Error: [object Object]`.
 */
function errorName(error: unknown): string {
  try {
    if (typeof error === 'object' && error !== null) {
      const name = (error as { name?: unknown }).name;
      if (typeof name === 'string' && name !== '') return name;
    }
  } catch {
    // A hostile getter: fall through to the generic name.
  }
  return 'Error';
}

function errorMessage(error: unknown): string {
  try {
    if (typeof error === 'object' && error !== null) {
      const message = (error as { message?: unknown }).message;
      if (message !== undefined && message !== null) return typeof message === 'string' ? message : toDOMString(message);
    }
    return toDOMString(error);
  } catch {
    return 'An error was thrown that cannot be described.';
  }
}

/**
 * Every value the invocation resolves with has no prototype. Resolving a promise with an object
 * looks up its `then`; one inheriting from Object.prototype would be adopted as a thenable once a
 * tool defines `Object.prototype.then`, and the tool's `then` would receive the resolve function,
 * free to hand the host any value (a 20 MB ArrayBuffer, a Map) past the result and output checks.
 */
function unthenable<T extends object>(value: T): T {
  ObjectSetPrototypeOf(value, null);
  return value;
}

export function errorResult(error: unknown): InvokeError {
  return unthenable({ error: { name: errorName(error), message: errorMessage(error) } });
}

/** A JSON round trip with the captured JSON functions: plain data only, undefined becomes null. */
function jsonSafe(value: unknown): unknown {
  const text = JSONStringify(value);
  return text === undefined ? null : (JSONParse(text) as unknown);
}

function normalizeToolResult(value: unknown): GuestToolResult {
  if (typeof value === 'string') return unthenable({ content: value, isError: false, metadata: null, terminate: false });
  if (typeof value !== 'object' || value === null || ArrayIsArray(value)) {
    const what = value === null ? 'null' : ArrayIsArray(value) ? 'an array' : typeof value;
    throw new TypeErrorCtor(`A tool must return a string or { content, isError?, metadata?, terminate? }; it returned ${what}.`);
  }
  const record = value as Record<string, unknown>;
  const content = record.content;
  if (typeof content !== 'string') {
    throw new TypeErrorCtor(`The tool result's content must be a string; it was ${content === null ? 'null' : typeof content}.`);
  }
  const metadata = record.metadata;
  let copied: Record<string, unknown> | null = null;
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata !== 'object' || ArrayIsArray(metadata)) throw new TypeErrorCtor("The tool result's metadata must be an object.");
    copied = jsonSafe(metadata) as Record<string, unknown>;
  }
  return unthenable({ content, isError: record.isError === true, metadata: copied, terminate: record.terminate === true });
}

const controller = new AbortController();
let abortCurrent: ((reason: string) => void) | null = null;

function readModule(): Record<string, unknown> {
  const descriptor = ReflectGetOwnPropertyDescriptor(globalThisRef, MODULE_GLOBAL);
  const module: unknown = descriptor?.value;
  if (typeof module !== 'object' || module === null) throw new TypeErrorCtor('The tool module did not load: __paddock_module is missing.');
  return module as Record<string, unknown>;
}

async function runTool(params: unknown, callId: string, sessionId: string | null): Promise<GuestToolResult> {
  const module = readModule();
  const execute = ObjectHasOwn(module, 'default') ? module.default : undefined;
  if (typeof execute !== 'function') throw new TypeErrorCtor('The tool module has no default export function.');
  const ctx = ObjectFreeze({
    signal: controller.signal,
    update(text: string): Promise<void> {
      const request = hostRequest('update', { text: toDOMString(text) });
      return PromisePrototypeThen(request.promise, () => undefined);
    },
    callId,
    sessionId,
  });
  return normalizeToolResult(await (ReflectApply(execute, undefined, [params, ctx]) as unknown));
}

async function runExec(): Promise<{ result: unknown }> {
  const module = readModule();
  const main = ObjectHasOwn(module, 'default') ? module.default : undefined;
  const value: unknown = typeof main === 'function' ? await (ReflectApply(main, undefined, []) as unknown) : await main;
  return unthenable({ result: jsonSafe(value) });
}

/**
 * The module's declarations, for the registry: what it exports as name, description, parameters
 * and permissions (JSON copies; whatever is not JSON is dropped) and whether it has an execute.
 */
function runDescribe(): { result: unknown } {
  const module = readModule();
  const field = (key: string): unknown => (ObjectHasOwn(module, key) ? jsonSafe(module[key]) : null);
  return unthenable({
    result: {
      name: field('name'),
      description: field('description'),
      parameters: field('parameters'),
      permissions: field('permissions'),
      hasExecute: ObjectHasOwn(module, 'default') && typeof module.default === 'function',
    },
  });
}

/** `__paddock_invoke`: the host calls it once per context (tests call it more often). */
export function invoke(input: unknown): Promise<InvokeOutput> {
  const { promise, resolve } = withResolvers<InvokeOutput>();
  let settled = false;
  const finish = (output: InvokeOutput): void => {
    if (settled) return;
    settled = true;
    resolve(output);
  };
  abortCurrent = (reason: string): void => { finish(errorResult(new DOMException(reason, 'AbortError'))); };
  onUncaught((error) => { finish(errorResult(error)); });

  let work: Promise<InvokeOutput>;
  try {
    const kind = typeof input === 'object' && input !== null ? (input as { kind?: unknown }).kind : undefined;
    if (kind === 'tool') {
      const { params, callId, sessionId } = input as { params: unknown; callId: unknown; sessionId: unknown };
      work = runTool(params, toDOMString(callId), typeof sessionId === 'string' ? sessionId : null);
    } else if (kind === 'exec') {
      work = runExec();
    } else if (kind === 'describe') {
      work = PromiseResolve(runDescribe());
    } else {
      throw new TypeErrorCtor(`Unknown invocation kind: ${ObjectPrototypeToString(kind)}.`);
    }
  } catch (error) {
    finish(errorResult(error));
    return promise;
  }
  void PromisePrototypeThen(work, finish, (error: unknown) => { finish(errorResult(error)); });
  return promise;
}

/** `__paddock_abort`: aborts ctx.signal, cancels timers and in-flight host requests, ends the invocation. */
export function abort(reason: unknown): void {
  const message = typeof reason === 'string' ? reason : 'The call was aborted.';
  if (!controller.signal.aborted) controller.abort(new DOMException(message, 'AbortError'));
  clearAllTimers();
  cancelAllRequests();
  if (abortCurrent !== null) abortCurrent(message);
}
