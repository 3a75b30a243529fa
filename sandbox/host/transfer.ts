import ivm from 'isolated-vm';
import { BRIDGE_GLOBALS } from '../protocol.ts';
import type { BridgeOutcome } from '../protocol.ts';

/**
 * The only module that touches isolated-vm's transfer classes. Guest code receives plain functions
 * (Callbacks, whose arguments and results are always copied); every Reference stays on this side.
 */

export interface Doors {
  /** Starts an async host operation; returns its id. Throwing here throws a plain Error in the guest. */
  request(op: string, args: unknown): number;
  call(op: string, args: unknown): BridgeOutcome;
  cancel(id: number): void;
}

/** A function living in the guest, callable from the host with copied arguments and result. */
export interface GuestFunction {
  /** Calls it and waits for the returned promise (if any), copying the result out. */
  call(args: readonly unknown[], options?: { timeoutMs?: number }): Promise<unknown>;
  /** Calls it without waiting and without caring how it ends. */
  fire(args: readonly unknown[]): void;
}

/** A thrown Error crossing into the isolate carries only this message, never a host stack. */
class DoorError extends Error {}

function doorCallbacks(doors: Doors): [name: string, callback: ivm.Callback][] {
  const guard = <Args extends unknown[], Result>(run: (...args: Args) => Result) => (...args: Args): Result => {
    try {
      return run(...args);
    } catch (error) {
      throw new DoorError(error instanceof DoorError || error instanceof TypeError ? error.message : 'The host refused the operation.');
    }
  };
  return [
    [BRIDGE_GLOBALS.request, new ivm.Callback(guard((op: unknown, args: unknown) => doors.request(String(op), args)))],
    [BRIDGE_GLOBALS.call, new ivm.Callback(guard((op: unknown, args: unknown) => doors.call(String(op), args)))],
    [BRIDGE_GLOBALS.cancel, new ivm.Callback(guard((id: unknown) => { doors.cancel(Number(id)); }))],
  ];
}

export async function installDoors(context: ivm.Context, doors: Doors): Promise<void> {
  for (const [name, callback] of doorCallbacks(doors)) await context.global.set(name, callback);
}

/** installDoors without a hop to the isolate's thread per global (the caller's thread does the work). */
export function installDoorsSync(context: ivm.Context, doors: Doors): void {
  for (const [name, callback] of doorCallbacks(doors)) context.global.setSync(name, callback);
}

/** Throws a message the guest may see (used for bridge misuse such as an unknown op). */
export function refuse(message: string): never {
  throw new DoorError(message);
}

/** Takes a function the guest defined on its global object, then deletes the global. */
export async function takeGuestFunction(context: ivm.Context, name: string): Promise<GuestFunction> {
  const reference = (await context.global.get(name, { reference: true })) as ivm.Reference<(...args: unknown[]) => unknown>;
  if (reference.typeof !== 'function') throw new Error(`the guest runtime did not define ${name}`);
  await context.global.delete(name);
  return guestFunction(reference);
}

/** takeGuestFunction on the caller's thread. */
export function takeGuestFunctionSync(context: ivm.Context, name: string): GuestFunction {
  const reference = context.global.getSync(name, { reference: true }) as ivm.Reference<(...args: unknown[]) => unknown>;
  if (reference.typeof !== 'function') throw new Error(`the guest runtime did not define ${name}`);
  context.global.deleteSync(name);
  return guestFunction(reference);
}

function guestFunction(reference: ivm.Reference<(...args: unknown[]) => unknown>): GuestFunction {
  return {
    async call(args, options = {}) {
      return reference.apply(undefined, [...args], {
        arguments: { copy: true },
        result: { promise: true, copy: true },
        ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
      });
    },
    fire(args) {
      try {
        reference.applyIgnored(undefined, [...args], { arguments: { copy: true } });
      } catch {
        // The isolate is gone: nothing left to tell.
      }
    },
  };
}

/** Compiles a script in this isolate, reusing V8's code cache for the same source. */
export async function compileCached(
  isolate: ivm.Isolate,
  code: string,
  filename: string,
  cache: Map<string, ArrayBuffer>,
  cacheKey: string,
): Promise<ivm.Script> {
  const cached = cache.get(cacheKey);
  const options = compileOptions(filename, cached);
  const script = (await isolate.compileScript(code, options)) as ivm.Script & ivm.CachedDataResult;
  keepCache(script, options, cached, cache, cacheKey);
  return script;
}

/**
 * compileCached on the caller's thread: no hop to the isolate's thread and back. Compiling runs no
 * guest code, so it is bounded by the source's size.
 */
export function compileCachedSync(
  isolate: ivm.Isolate,
  code: string,
  filename: string,
  cache: Map<string, ArrayBuffer>,
  cacheKey: string,
): ivm.Script {
  const cached = cache.get(cacheKey);
  const options = compileOptions(filename, cached);
  const script = isolate.compileScriptSync(code, options) as ivm.Script & ivm.CachedDataResult;
  keepCache(script, options, cached, cache, cacheKey);
  return script;
}

// isolated-vm reports a rejected cache by setting `cachedDataRejected` on the options object.
type CompileOptions = ivm.ScriptInfo & { cachedDataRejected?: boolean };

function compileOptions(filename: string, cached: ArrayBuffer | undefined): CompileOptions {
  return cached === undefined ? { filename, produceCachedData: true } : { filename, cachedData: new ivm.ExternalCopy(cached) };
}

function keepCache(script: ivm.Script & ivm.CachedDataResult, options: CompileOptions, cached: ArrayBuffer | undefined, cache: Map<string, ArrayBuffer>, cacheKey: string): void {
  if (cached !== undefined && options.cachedDataRejected !== true) return;
  const produced = script.cachedData?.copy();
  if (produced !== undefined) cache.set(cacheKey, produced);
  else if (options.cachedDataRejected === true) cache.delete(cacheKey);
}

export { ivm };
