import { compileCachedSync, installDoorsSync, ivm, refuse, takeGuestFunctionSync } from './transfer.ts';
import type { Doors, GuestFunction } from './transfer.ts';

/**
 * An isolate with the guest runtime booted and its doors installed, but no call attached yet. The
 * doors forward to whichever call is attached, exactly once: a prepared isolate serves one call and
 * is then disposed, never reused.
 */
export interface PreparedIsolate {
  readonly isolate: ivm.Isolate;
  readonly context: ivm.Context;
  readonly heapMiB: number;
  readonly runtimeHash: string;
  readonly settle: GuestFunction;
  readonly invoke: GuestFunction;
  readonly abort: GuestFunction;
  /** CPU time spent preparing, not charged to the call. */
  readonly baselineCpuNs: bigint;
  attach(doors: Doors): void;
}

/** V8 code caches, by content hash: the next isolate to load the same source skips parsing and compiling. */
export const codeCache = new Map<string, ArrayBuffer>();

const PREPARE_TIMEOUT_MS = 5000;
const RUNTIME_FILENAME = 'paddock:runtime';
const runtimeCacheKey = (runtime: { hash: string }): string => `runtime:${runtime.hash}`;

/**
 * Prepares an isolate in three synchronous steps, yielding to the event loop between them. Each
 * step runs on this thread, not as a task for the isolate's thread: a hop there and back per
 * operation (about a dozen here) cost ~25% more CPU per isolate (measured: 4.6-5.4 vs 3.1-4.2 ms
 * per prepare+dispose). Only trusted code runs (the runtime script and its boot), in at most
 * ~1.5 ms per step, and a message that arrives meanwhile (a call, an abort) is handled between steps.
 */
export async function prepareIsolate(runtime: { code: string; hash: string }, heapMiB: number): Promise<PreparedIsolate> {
  const steps = preparationSteps(runtime, heapMiB);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function* preparationSteps(runtime: { code: string; hash: string }, heapMiB: number): Generator<void, PreparedIsolate> {
  const isolate = new ivm.Isolate({ memoryLimit: heapMiB });
  try {
    const context = isolate.createContextSync();
    yield;
    const script = compileCachedSync(isolate, runtime.code, RUNTIME_FILENAME, codeCache, runtimeCacheKey(runtime));
    script.runSync(context, { timeout: PREPARE_TIMEOUT_MS });
    yield;
    let attached: Doors | undefined;
    const forward: Doors = {
      request: (op, args) => (attached ?? refuse('No call is attached.')).request(op, args),
      call: (op, args) => (attached ?? refuse('No call is attached.')).call(op, args),
      cancel: (id) => { attached?.cancel(id); },
    };
    installDoorsSync(context, forward);
    context.evalSync('__paddock_boot()', { timeout: PREPARE_TIMEOUT_MS });
    const settle = takeGuestFunctionSync(context, '__paddock_settle');
    const invoke = takeGuestFunctionSync(context, '__paddock_invoke');
    const abort = takeGuestFunctionSync(context, '__paddock_abort');
    let used = false;
    return {
      isolate, context, heapMiB, runtimeHash: runtime.hash, settle, invoke, abort,
      baselineCpuNs: isolate.cpuTime,
      attach(doors) {
        if (used) throw new Error('a prepared isolate serves exactly one call');
        used = true;
        attached = doors;
      },
    };
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}

const PRIME_MODULE = 'var __paddock_module = { default: function () { return "primed"; } };';

/**
 * Fills the runtime's code cache from an isolate that has booted and served one trivial call. A
 * cache made right after compiling holds only the eagerly compiled top level; this one also holds
 * every function boot and a call went through, so later isolates skip compiling them lazily
 * (measured on 2 cores: a call's invoke 0.91 -> 0.67 ms, preparing an isolate 4.4 -> 3.8 ms CPU).
 * Only trusted code runs in that isolate (the runtime and a one-line module), and it is disposed.
 */
export async function primeRuntimeCodeCache(runtime: { code: string; hash: string }, heapMiB: number): Promise<void> {
  const prepared = await prepareIsolate(runtime, heapMiB);
  const { isolate, context } = prepared;
  try {
    prepared.attach({ request: () => refuse('No call is attached.'), call: () => refuse('No call is attached.'), cancel: () => undefined });
    const module = await isolate.compileScript(PRIME_MODULE, { filename: 'paddock:prime' });
    await module.run(context, { timeout: PREPARE_TIMEOUT_MS });
    await prepared.invoke.call([{ kind: 'tool', params: {}, callId: 'prime', sessionId: null }], { timeoutMs: PREPARE_TIMEOUT_MS });
    // The same source and name hit this isolate's compilation cache: the script as it is now, inner functions compiled.
    const options: ivm.ScriptInfo = { filename: RUNTIME_FILENAME, produceCachedData: true };
    const again = (await isolate.compileScript(runtime.code, options)) as ivm.Script & ivm.CachedDataResult;
    const produced = again.cachedData?.copy();
    if (produced !== undefined) codeCache.set(runtimeCacheKey(runtime), produced);
  } finally {
    if (!isolate.isDisposed) isolate.dispose();
  }
}

/**
 * Keeps a few prepared isolates ready for calls with the default heap size, so a call skips isolate
 * creation and runtime boot. Taking one never starts work: the owner calls `refill()` once the
 * call's reply is out, so preparing the next isolate (about 4 ms of CPU, part of it synchronous on
 * this thread) never sits on a call's path. Isolates are prepared one at a time.
 */
export class WarmIsolates {
  readonly #runtime: { code: string; hash: string };
  readonly #heapMiB: number;
  readonly #target: number;
  readonly #ready: PreparedIsolate[] = [];
  #filling = false;
  #closed = false;

  constructor(runtime: { code: string; hash: string }, heapMiB: number, target: number) {
    this.#runtime = runtime;
    this.#heapMiB = heapMiB;
    this.#target = target;
    this.refill();
  }

  /** Prepared isolates waiting for a call. */
  get size(): number {
    return this.#ready.length;
  }

  /** A prepared isolate for `heapMiB`, or undefined when none is ready (the caller prepares one itself). */
  take(heapMiB: number, runtimeHash: string): PreparedIsolate | undefined {
    if (heapMiB !== this.#heapMiB || runtimeHash !== this.#runtime.hash) return undefined;
    return this.#ready.shift();
  }

  /** Prepares isolates, one after the other, until the target is ready again. */
  refill(): void {
    if (this.#filling || this.#closed || this.#ready.length >= this.#target) return;
    this.#filling = true;
    prepareIsolate(this.#runtime, this.#heapMiB).then((prepared) => {
      this.#filling = false;
      if (this.#closed) {
        prepared.isolate.dispose();
        return;
      }
      this.#ready.push(prepared);
      this.refill();
    }, () => {
      // A runtime that cannot boot fails every call the same way; the cold path reports it.
      this.#filling = false;
    });
  }

  close(): void {
    this.#closed = true;
    for (const prepared of this.#ready.splice(0)) if (!prepared.isolate.isDisposed) prepared.isolate.dispose();
  }
}
