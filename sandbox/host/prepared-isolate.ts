import { RUNTIME_WARMUP } from './runtime-warmup.ts';
import { compileCachedSync, installDoorsSync, ivm, refuse, takeGuestFunctionSync } from './transfer.ts';
import type { Doors, GuestFunction } from './transfer.ts';

/**
 * The guest runtime script isolates boot, and once the worker has made and checked one, a startup
 * snapshot of it (the script already evaluated, its functions already compiled): isolates made from
 * it skip evaluating the runtime, take ~20% less CPU to prepare and about half the memory.
 */
export interface RuntimeSource {
  readonly code: string;
  readonly hash: string;
  readonly snapshot?: ivm.ExternalCopy<ArrayBuffer> | undefined;
}

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
  /** A bundle compiled here ahead of the call, on the guess that the call runs it (see WarmIsolates.expect). */
  precompiled: { readonly hash: string; readonly script: ivm.Script } | undefined;
  attach(doors: Doors): void;
}

/** The bundle a call is likely to run, as the warm pool guesses it. */
export interface ExpectedBundle {
  readonly code: string;
  readonly filename: string;
  readonly hash: string;
}

/** V8 code caches, by content hash: the next isolate to load the same source skips parsing and compiling. */
export const codeCache = new Map<string, ArrayBuffer>();
/** The key of a bundle's V8 code cache in `codeCache` (the worker drops it with the bundle). */
export const bundleCacheKey = (hash: string): string => `bundle:${hash}`;
/** Compiling on the worker's thread blocks it: only bundles up to this size with a code cache are compiled ahead. */
const PRECOMPILE_MAX_CHARS = 1024 * 1024;

const PREPARE_TIMEOUT_MS = 5000;
const RUNTIME_FILENAME = 'paddock:runtime';
const runtimeCacheKey = (runtime: { hash: string }): string => `runtime:${runtime.hash}`;

/**
 * Prepares an isolate in three or four synchronous steps, yielding to the event loop between them. Each
 * step runs on this thread, not as a task for the isolate's thread: a hop there and back per
 * operation (about a dozen here) cost ~25% more CPU per isolate (measured: 4.6-5.4 vs 3.1-4.2 ms
 * per prepare+dispose). Only trusted code runs (the runtime script and its boot), in at most
 * ~1.5 ms per step, and a message that arrives meanwhile (a call, an abort) is handled between steps.
 */
export async function prepareIsolate(runtime: RuntimeSource, heapMiB: number): Promise<PreparedIsolate> {
  const steps = preparationSteps(runtime, heapMiB);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function* preparationSteps(runtime: RuntimeSource, heapMiB: number): Generator<void, PreparedIsolate> {
  const { snapshot } = runtime;
  const isolate = snapshot === undefined ? new ivm.Isolate({ memoryLimit: heapMiB }) : new ivm.Isolate({ memoryLimit: heapMiB, snapshot });
  try {
    yield; // creating the isolate and its context take ~1.4 and ~0.5 ms: a call that arrives meanwhile waits for one, not both
    const context = isolate.createContextSync();
    yield;
    if (snapshot === undefined) {
      const script = compileCachedSync(isolate, runtime.code, RUNTIME_FILENAME, codeCache, runtimeCacheKey(runtime));
      script.runSync(context, { timeout: PREPARE_TIMEOUT_MS });
      yield;
    }
    return bootRuntime(isolate, context, heapMiB, runtime.hash);
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}

/**
 * The last step of preparing an isolate whose context holds the evaluated runtime: installs doors
 * that forward to whichever call is attached later (exactly once), boots the runtime and takes its
 * entry functions. `onStep` hears each sub-step end (the benchmark times them).
 */
export function bootRuntime(isolate: ivm.Isolate, context: ivm.Context, heapMiB: number, runtimeHash: string, onStep?: (step: 'install doors' | 'boot' | 'take entry functions') => void): PreparedIsolate {
  let attached: Doors | undefined;
  const forward: Doors = {
    request: (op, args) => (attached ?? refuse('No call is attached.')).request(op, args),
    call: (op, args) => (attached ?? refuse('No call is attached.')).call(op, args),
    cancel: (id) => { attached?.cancel(id); },
  };
  installDoorsSync(context, forward);
  onStep?.('install doors');
  context.evalSync('__paddock_boot()', { timeout: PREPARE_TIMEOUT_MS });
  onStep?.('boot');
  const settle = takeGuestFunctionSync(context, '__paddock_settle');
  const invoke = takeGuestFunctionSync(context, '__paddock_invoke');
  const abort = takeGuestFunctionSync(context, '__paddock_abort');
  onStep?.('take entry functions');
  let used = false;
  return {
    isolate, context, heapMiB, runtimeHash, settle, invoke, abort,
    baselineCpuNs: isolate.cpuTime,
    precompiled: undefined,
    attach(doors) {
      if (used) throw new Error('a prepared isolate serves exactly one call');
      used = true;
      attached = doors;
    },
  };
}

const PRIME_MODULE = 'var __paddock_module = { default: function () { return "primed"; } };';

/** Prepares an isolate from `runtime` and runs a trivial call in it; returns the isolate, still alive. */
async function serveTrivialCall(runtime: RuntimeSource, heapMiB: number): Promise<PreparedIsolate> {
  const prepared = await prepareIsolate(runtime, heapMiB);
  const { isolate, context } = prepared;
  try {
    prepared.attach({ request: () => refuse('No call is attached.'), call: () => refuse('No call is attached.'), cancel: () => undefined });
    const module = await isolate.compileScript(PRIME_MODULE, { filename: 'paddock:prime' });
    await module.run(context, { timeout: PREPARE_TIMEOUT_MS });
    const result = await prepared.invoke.call([{ kind: 'tool', params: {}, callId: 'prime', sessionId: null }], { timeoutMs: PREPARE_TIMEOUT_MS });
    if ((result as { content?: unknown } | null)?.content !== 'primed') throw new Error(`the runtime answered a trivial call with ${JSON.stringify(result)}`);
    return prepared;
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}

/**
 * Fills the runtime's code cache from an isolate that has booted and served one trivial call, then
 * ran the warm-up workload (./runtime-warmup.ts) in a second context. A cache made right after
 * compiling holds only the eagerly compiled top level; this one also holds every function boot and
 * common calls go through, so later isolates skip compiling them lazily (measured on 2 cores: a
 * call's invoke 0.91 -> 0.67 ms, preparing an isolate 4.4 -> 3.8 ms CPU). Only trusted code runs in
 * that isolate (the runtime, the warm-up and a one-line module), and it is disposed.
 */
export async function primeRuntimeCodeCache(runtime: RuntimeSource, heapMiB: number): Promise<void> {
  const { isolate } = await serveTrivialCall({ code: runtime.code, hash: runtime.hash }, heapMiB);
  try {
    // The same source in the same isolate shares compiled functions across contexts.
    const warmContext = await isolate.createContext();
    await (await isolate.compileScript(runtime.code, { filename: RUNTIME_FILENAME })).run(warmContext, { timeout: PREPARE_TIMEOUT_MS });
    await warmContext.eval(RUNTIME_WARMUP, { timeout: PREPARE_TIMEOUT_MS });
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
 * A startup snapshot of the runtime, checked: an isolate made from it must boot and serve a trivial
 * call, or the snapshot is released and this throws (isolated-vm calls createSnapshot
 * experimental; the caller keeps evaluating the runtime instead). Synchronous for ~20-35 ms.
 */
export async function createRuntimeSnapshot(runtime: RuntimeSource, heapMiB: number): Promise<ivm.ExternalCopy<ArrayBuffer>> {
  const snapshot = ivm.Isolate.createSnapshot([{ code: runtime.code, filename: RUNTIME_FILENAME }], RUNTIME_WARMUP);
  try {
    const { isolate } = await serveTrivialCall({ code: runtime.code, hash: runtime.hash, snapshot }, heapMiB);
    isolate.dispose();
    return snapshot;
  } catch (error) {
    snapshot.release();
    throw error;
  }
}

/** Compiles `bundle` into a prepared isolate when its code cache makes that quick; otherwise leaves it to the call. */
function precompile(prepared: PreparedIsolate, bundle: ExpectedBundle): void {
  const key = bundleCacheKey(bundle.hash);
  if (!codeCache.has(key) || bundle.code.length > PRECOMPILE_MAX_CHARS) return;
  try {
    prepared.precompiled = { hash: bundle.hash, script: compileCachedSync(prepared.isolate, bundle.code, bundle.filename, codeCache, key) };
  } catch {
    // The call compiles it again and reports the error.
  }
}

/**
 * Keeps a few prepared isolates ready for calls with the default heap size, so a call skips isolate
 * creation and runtime boot. Taking one never starts work: the owner calls `refill()` once the
 * call's reply is out, so preparing the next isolate (about 4 ms of CPU, part of it synchronous on
 * this thread) never sits on a call's path. Isolates are prepared one at a time.
 */
export class WarmIsolates {
  #runtime: RuntimeSource;
  readonly #heapMiB: number;
  readonly #target: number;
  readonly #ready: PreparedIsolate[] = [];
  #expected: ExpectedBundle | undefined;
  #filling = false;
  #closed = false;

  constructor(runtime: RuntimeSource, heapMiB: number, target: number) {
    this.#runtime = runtime;
    this.#heapMiB = heapMiB;
    this.#target = target;
    this.refill();
  }

  /** Prepares the next isolates from this source (the same runtime, now with a snapshot); those ready stay. */
  useRuntime(runtime: RuntimeSource): void {
    if (runtime.hash !== this.#runtime.hash) throw new Error('the warm pool serves one runtime');
    this.#runtime = runtime;
  }

  /**
   * The bundle the next calls will likely run (the last one a call ran): isolates prepared from now
   * on compile it too, from its code cache, so a call running it skips compiling (~0.05 ms of work,
   * but 0.3-0.4 ms on an idle worker whose caches went cold). Compiling runs no guest code; a call
   * that runs another bundle compiles its own as before. Undefined: guess nothing.
   */
  expect(bundle: ExpectedBundle | undefined): void {
    this.#expected = bundle;
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
    prepareIsolate(this.#runtime, this.#heapMiB).then(async (prepared) => {
      const expected = this.#expected;
      if (expected !== undefined && !this.#closed) {
        await new Promise((resolve) => setImmediate(resolve));
        precompile(prepared, expected);
      }
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
