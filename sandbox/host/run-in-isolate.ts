import { CallError, GuestError } from '../errors.ts';
import type { CallLimits } from '../limits.ts';
import { MAX_RANDOM_BYTES } from '../protocol.ts';
import type { AsyncOp, AsyncOps, BridgeError, BridgeOutcome, GuestToolResult, SyncOp, SyncOps } from '../protocol.ts';
import { checkOpArgs } from './op-args.ts';
import { bundleCacheKey, codeCache, prepareIsolate } from './prepared-isolate.ts';
import type { PreparedIsolate, RuntimeSource } from './prepared-isolate.ts';
import { compileCached, compileCachedSync, refuse } from './transfer.ts';
import type { ivm } from './transfer.ts';

/** Host functions for one call, already bound to its grant (capabilities) and its identity. */
export interface HostHandlers {
  async: { [K in AsyncOp]?: (args: AsyncOps[K]['args'], signal: AbortSignal) => Promise<AsyncOps[K]['result']> };
  sync: { [K in SyncOp]?: (args: SyncOps[K]['args']) => SyncOps[K]['result'] };
}

export type InvokeInput =
  | { kind: 'tool'; params: unknown; callId: string; sessionId: string | null }
  | { kind: 'exec' }
  /** Reads the module's declarations (name, description, parameters, permissions) without running execute. */
  | { kind: 'describe' };

export interface IsolateCall {
  /** The guest runtime script (defines `__paddock_boot`), and its snapshot once the worker has one. */
  runtime: RuntimeSource;
  /** The tool module or snippet, bundled as an IIFE that sets `__paddock_module`. */
  bundle: { code: string; hash: string; filename: string };
  /** Keep the bundle's V8 code cache for later calls (not worth it for a one-off exec snippet). @defaultValue true */
  cacheCode?: boolean | undefined;
  input: InvokeInput;
  limits: Readonly<CallLimits>;
  handlers: HostHandlers;
  signal?: AbortSignal | undefined;
  onUpdate?: ((text: string) => void) | undefined;
  onLog?: ((level: string, text: string) => void) | undefined;
  /**
   * Takes over disposing the isolate of a call that ended on its own (the guest returned or threw,
   * so it runs nothing more): the worker disposes it once the reply is sent, keeping ~0.3 ms off the
   * call's path. An isolate whose call a limit or an abort ended is disposed at once regardless, as
   * its guest may still be running. Without it, every isolate is disposed before runInIsolate returns.
   */
  deferDispose?: ((dispose: () => void) => void) | undefined;
  /**
   * Told when the guest turns idle (its isolate spent under half the last CPU poll's window running
   * while at least one host operation, such as a fetch or a timer, was pending) or busy again. A call
   * starts busy; nothing is told after the outcome. Lets the worker's supervisor count only calls
   * that compete for CPU.
   */
  onBusyChange?: ((busy: boolean) => void) | undefined;
}

/** Where the call's time went (ms); phases the call never reached stay 0. */
export interface IsolatePhases {
  /** Preparing an isolate inside the call: 0 when a prepared (warm) one was handed in. */
  prepare: number;
  cold: boolean;
  compile: number;
  run: number;
  invoke: number;
  finish: number;
}

export type IsolateOutcome =
  | { ok: true; value: GuestToolResult | { result: unknown }; cpuMs: number; phases: IsolatePhases }
  | { ok: false; error: CallError; cpuMs: number; phases: IsolatePhases };

const CPU_POLL_MS = 10;

/** After an abort, how long the guest gets to notice ctx.signal before its isolate is disposed. */
const ABORT_GRACE_MS = 20;
/** Share of wall time spent on the guest's CPU above which it counts as busy (no abort grace). */
const BUSY_SHARE = 0.5;

/**
 * Runs one call in a fresh isolate that nothing else has used and nothing will use again. Every
 * way out (result, error, limit, abort) disposes the isolate and abandons pending host operations.
 */
export async function runInIsolate(call: IsolateCall, warm?: PreparedIsolate): Promise<IsolateOutcome> {
  const { limits } = call;
  const phases: IsolatePhases = { prepare: 0, cold: warm === undefined, compile: 0, run: 0, invoke: 0, finish: 0 };
  let mark = performance.now();
  const lap = (phase: Exclude<keyof IsolatePhases, 'cold'>): void => {
    const now = performance.now();
    phases[phase] = now - mark;
    mark = now;
  };
  let prepared: PreparedIsolate;
  try {
    prepared = warm ?? await prepareIsolate(call.runtime, limits.heapMiB);
  } catch (error) {
    return { ok: false, error: new CallError('crashed', `The guest runtime could not start: ${error instanceof Error ? error.message : String(error)}`), cpuMs: 0, phases };
  }
  lap('prepare');
  const { isolate, context, settle, invoke, abort: abortGuest, baselineCpuNs } = prepared;
  const pending = new Map<number, AbortController>();
  let nextId = 1;
  let opsStarted = 0;
  let outputBytes = 0;
  let ended: CallError | undefined;
  /** Set once the outcome is decided: from then on the doors refuse, whatever the isolate still does. */
  let closed = false;
  let endCall: (error: CallError) => void = () => undefined;
  const endedEarly = new Promise<CallError>((resolve) => { endCall = resolve; });
  const endedWith = (): CallError | undefined => ended;
  const end = (error: CallError): void => {
    if (ended !== undefined) return;
    ended = error;
    endCall(error);
  };

  const countOutput = (bytes: number, what: string): void => {
    outputBytes += bytes;
    if (outputBytes > limits.maxOutputBytes) {
      end(new CallError('output_limit', `The call's output (${what} included) exceeded its limit of ${limits.maxOutputBytes} bytes.`, { limitBytes: limits.maxOutputBytes }));
    }
  };

  const builtinAsync: HostHandlers['async'] = {
    sleep: (args, signal) => sleep(Math.min(Math.max(0, args.ms), limits.wallTimeMs), signal),
    update: (args) => {
      const text = args.text;
      countOutput(Buffer.byteLength(text), 'updates');
      if (ended === undefined) call.onUpdate?.(text);
      return Promise.resolve(null);
    },
  };
  const builtinSync: HostHandlers['sync'] = {
    randomBytes: (args) => {
      const length = args.length;
      if (!Number.isInteger(length) || length < 0 || length > MAX_RANDOM_BYTES) throw new GuestError('QuotaExceededError', `The requested length exceeds ${MAX_RANDOM_BYTES} bytes.`);
      // Web Crypto's global loads node:crypto on first use; importing it costs a starting worker ~12 ms.
      return crypto.getRandomValues(new Uint8Array(length));
    },
    log: (args) => {
      const text = args.text;
      countOutput(Buffer.byteLength(text) + 1, 'logs');
      if (ended === undefined) call.onLog?.(args.level, text);
      return null;
    },
  };

  const doors = {
    request(op: string, args: unknown): number {
      if (closed) refuse('The call has ended.');
      const handler = lookup(call.handlers.async, op) ?? lookup(builtinAsync, op);
      if (handler === undefined) refuse(`Unknown host operation "${op}".`);
      const mismatch = checkOpArgs(op, args);
      if (mismatch !== undefined) refuse(mismatch);
      if (++opsStarted > limits.maxHostOps) refuse(`The call started more than ${limits.maxHostOps} host operations.`);
      if (pending.size >= limits.maxPendingOps) refuse(`The call has more than ${limits.maxPendingOps} host operations pending.`);
      const id = nextId++;
      const controller = new AbortController();
      pending.set(id, controller);
      const run = handler as (args: unknown, signal: AbortSignal) => Promise<unknown>;
      Promise.resolve()
        .then(() => run(args, controller.signal))
        .then((value): BridgeOutcome => ({ ok: true, value }), (error: unknown): BridgeOutcome => ({ ok: false, error: toBridgeError(error, controller.signal) }))
        .then((outcome) => {
          pending.delete(id);
          if (ended === undefined) settle.fire([id, outcome]);
        }, () => undefined);
      return id;
    },
    call(op: string, args: unknown): BridgeOutcome {
      if (closed) refuse('The call has ended.');
      const handler = lookup(call.handlers.sync, op) ?? lookup(builtinSync, op);
      if (handler === undefined) refuse(`Unknown host operation "${op}".`);
      const mismatch = checkOpArgs(op, args);
      if (mismatch !== undefined) refuse(mismatch);
      // Capability ops (env, cwd) are checked and audited on the host: a loop of them is bounded
      // like any other host operation. Logs are bounded by the output limit, random bytes cost nothing.
      if (op !== 'log' && op !== 'randomBytes' && ++opsStarted > limits.maxHostOps) {
        refuse(`The call started more than ${limits.maxHostOps} host operations.`);
      }
      try {
        return { ok: true, value: (handler as (args: unknown) => unknown)(args) };
      } catch (error) {
        return { ok: false, error: toBridgeError(error) };
      }
    },
    cancel(id: number): void {
      pending.get(id)?.abort();
    },
  };

  const wallTimer = setTimeout(() => {
    end(new CallError('timeout', `The call exceeded its wall-time limit of ${limits.wallTimeMs} ms.`, { clock: 'wall', limitMs: limits.wallTimeMs }));
  }, limits.wallTimeMs);
  const cpuLimitNs = BigInt(limits.cpuTimeMs) * 1_000_000n + baselineCpuNs;
  // The poll also keeps how busy the guest was lately: one computing all the time cannot notice an
  // abort (its isolate runs nothing else), so it gets no grace.
  let sampledCpuNs = baselineCpuNs;
  let sampledAt = performance.now();
  let busy = false;
  const sampleBusy = (): void => {
    const cpu = isolate.cpuTime;
    const now = performance.now();
    if (now - sampledAt < 2) return; // too short a window to tell
    busy = Number(cpu - sampledCpuNs) / 1e6 >= BUSY_SHARE * (now - sampledAt);
    sampledCpuNs = cpu;
    sampledAt = now;
  };
  let reportedBusy = true;
  const cpuTimer = setInterval(() => {
    if (isolate.isDisposed) return;
    if (isolate.cpuTime > cpuLimitNs) {
      end(new CallError('timeout', `The call exceeded its CPU-time limit of ${limits.cpuTimeMs} ms.`, { clock: 'cpu', limitMs: limits.cpuTimeMs }));
    }
    sampleBusy();
    // Idle means awaiting the host (a fetch, a timer, a file): a quiet isolate with nothing pending
    // is one still waiting for its thread on a loaded worker, and stays busy.
    const active = busy || pending.size === 0;
    if (active !== reportedBusy && ended === undefined) {
      reportedBusy = active;
      call.onBusyChange?.(active);
    }
  }, CPU_POLL_MS);
  const onAbort = (): void => {
    abortGuest.fire(['The call was aborted.']);
    if (!isolate.isDisposed) sampleBusy();
    if (busy) end(new CallError('aborted', 'The call was aborted.'));
    else setTimeout(() => { end(new CallError('aborted', 'The call was aborted.')); }, ABORT_GRACE_MS);
  };
  if (call.signal?.aborted === true) onAbort();
  else call.signal?.addEventListener('abort', onAbort, { once: true });

  prepared.attach(doors);
  const workStarted = performance.now();
  const work = (async (): Promise<unknown> => {
    const bundle = prepared.precompiled?.hash === call.bundle.hash && call.cacheCode !== false ? prepared.precompiled.script : await compileBundle(isolate, call);
    lap('compile');
    // Both tasks go to the isolate's thread at once, which runs them in order: the module's top level,
    // then the invocation. One wake-up of that thread instead of two; a top level that throws wins.
    const ran = bundle.run(context, { timeout: limits.wallTimeMs });
    const invoked = invoke.call([call.input]);
    invoked.catch(() => undefined);
    await ran;
    lap('run');
    const value = await invoked;
    lap('invoke');
    return value;
  })();

  try {
    const raced = await Promise.race([work.then((value) => ({ value })), endedEarly.then((error) => ({ error }))]);
    if ('error' in raced) return { ok: false, error: raced.error, cpuMs: cpuMs(isolate, baselineCpuNs), phases };
    const interpreted = interpretGuestValue(raced.value);
    // The guest settling with its AbortError after an abort is the abort, not a tool error.
    const outcome = !interpreted.ok && call.signal?.aborted === true
      ? { ok: false as const, error: new CallError('aborted', 'The call was aborted.') }
      : interpreted;
    if (outcome.ok) countOutput(Buffer.byteLength(JSON.stringify(outcome.value)), 'the result');
    else countOutput(Buffer.byteLength(outcome.error.message) + Buffer.byteLength(JSON.stringify(outcome.error.details)), 'the error');
    lap('finish');
    // A limit may have been crossed while the result was on its way out (output, or a timer that fired).
    const late = endedWith();
    if (late !== undefined) return { ok: false, error: late, cpuMs: cpuMs(isolate, baselineCpuNs), phases };
    return { ...outcome, cpuMs: cpuMs(isolate, baselineCpuNs), phases };
  } catch (error) {
    const failure = ended ?? classifyIsolateFailure(error, isolate, limits, performance.now() - workStarted);
    if (failure.kind === 'tool_error') countOutput(Buffer.byteLength(failure.message), 'the error');
    return { ok: false, error: endedWith() ?? failure, cpuMs: cpuMs(isolate, baselineCpuNs), phases };
  } finally {
    closed = true;
    clearTimeout(wallTimer);
    clearInterval(cpuTimer);
    call.signal?.removeEventListener('abort', onAbort);
    for (const controller of pending.values()) controller.abort();
    pending.clear();
    work.catch(() => undefined);
    const dispose = (): void => { if (!isolate.isDisposed) isolate.dispose(); };
    if (ended === undefined && call.deferDispose !== undefined) call.deferDispose(dispose);
    else dispose();
  }
}

/** Compiling on this thread blocks it; above these sizes the isolate's thread compiles instead. */
const SYNC_COMPILE_MAX_CHARS = 64 * 1024;
const SYNC_COMPILE_CACHED_MAX_CHARS = 1024 * 1024;

/**
 * The bundle compiled in the call's isolate. Compiling runs no guest code, so when it is quick (a
 * small bundle, or one with a code cache: ~0.1-0.4 ms) it runs on this thread and saves a hop to
 * the isolate's thread and back.
 */
function compileBundle(isolate: ivm.Isolate, call: IsolateCall): ivm.Script | Promise<ivm.Script> {
  const { code, filename, hash } = call.bundle;
  if (call.cacheCode === false) {
    return code.length <= SYNC_COMPILE_MAX_CHARS ? isolate.compileScriptSync(code, { filename }) : isolate.compileScript(code, { filename });
  }
  const key = bundleCacheKey(hash);
  const sync = code.length <= (codeCache.has(key) ? SYNC_COMPILE_CACHED_MAX_CHARS : SYNC_COMPILE_MAX_CHARS);
  return sync ? compileCachedSync(isolate, code, filename, codeCache, key) : compileCached(isolate, code, filename, codeCache, key);
}

/** Own properties only: an op named "constructor" or "__proto__" must be just an unknown op. */
function lookup(table: object, op: string): ((...args: never[]) => unknown) | undefined {
  if (!Object.hasOwn(table, op)) return undefined;
  const value = (table as Record<string, unknown>)[op];
  return typeof value === 'function' ? (value as (...args: never[]) => unknown) : undefined;
}

function cpuMs(isolate: ivm.Isolate, baselineNs: bigint): number {
  try {
    return Number((isolate.cpuTime - baselineNs) / 1000n) / 1000;
  } catch {
    return 0;
  }
}

/** The guest resolves to a GuestToolResult, `{ result }` (exec) or `{ error: { name, message } }` (a thrown error). */
function interpretGuestValue(value: unknown): { ok: true; value: GuestToolResult | { result: unknown } } | { ok: false; error: CallError } {
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const thrown = record['error'];
    if (typeof thrown === 'object' && thrown !== null) {
      const { name: rawName, message: rawMessage } = thrown as Record<string, unknown>;
      const name = typeof rawName === 'string' ? rawName : 'Error';
      const message = typeof rawMessage === 'string' ? rawMessage : '';
      return { ok: false, error: new CallError(name === 'NotCapable' ? 'not_capable' : 'tool_error', message, { name }) };
    }
    if ('result' in record) return { ok: true, value: { result: record['result'] } };
    if (typeof record['content'] === 'string') return { ok: true, value: record as unknown as GuestToolResult };
  }
  return { ok: false, error: new CallError('tool_error', 'The guest runtime returned a malformed result.', { name: 'Error' }) };
}

/**
 * Errors from isolated-vm when the isolate itself failed (heap limit, a script that ran out of
 * time) or the guest's own throw reached the host (its module's top level, an unhandled rejection).
 * Decided by the isolate's state and the clock, never by the message, which the guest may write.
 */
function classifyIsolateFailure(error: unknown, isolate: ivm.Isolate, limits: Readonly<CallLimits>, elapsedMs: number): CallError {
  // Only isolated-vm disposes an isolate mid-call (we dispose after the outcome): it hit its heap limit.
  if (isolate.isDisposed) {
    return new CallError('memory_limit', `The call exceeded its heap limit of ${limits.heapMiB} MiB.`, { limitMiB: limits.heapMiB });
  }
  if (elapsedMs >= limits.wallTimeMs) {
    return new CallError('timeout', `The call exceeded its wall-time limit of ${limits.wallTimeMs} ms.`, { clock: 'wall', limitMs: limits.wallTimeMs });
  }
  const message = error instanceof Error ? error.message : String(error);
  // isolated-vm's description of a thrown non-Error names the library: say it plainly instead.
  if (/within isolated-vm/.test(message)) return new CallError('tool_error', 'The tool threw a value that is not an Error.', { name: 'Error' });
  const name = error instanceof Error ? error.name : 'Error';
  return new CallError('tool_error', firstLine(message), { name });
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.replace(/ \[<isolated-vm>.*$/, '');
}

function toBridgeError(error: unknown, signal?: AbortSignal): BridgeError {
  if (error instanceof GuestError) {
    return { name: error.guestName, message: error.message, ...(error.guestCause === undefined ? {} : { cause: error.guestCause }) };
  }
  if (signal?.aborted === true) return { name: 'AbortError', message: 'The operation was aborted.' };
  return { name: 'Error', message: 'The host operation failed.' };
}

function sleep(ms: number, signal: AbortSignal): Promise<null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { resolve(null); }, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new GuestError('AbortError', 'The operation was aborted.'));
    }, { once: true });
  });
}
