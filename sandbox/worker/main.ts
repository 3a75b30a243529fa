/**
 * A sandbox worker process (started through ./entry.js): runs isolates for the coordinator, never
 * in the coordinator's process.
 * A V8 fatal error here (isolated-vm's heap limit is a guideline) kills only this process; the
 * supervisor in sandbox/pool fails the calls it was running and starts a replacement.
 */
import { writeFileSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import type { AuditRecord } from '../audit.ts';
import { WarmIsolates, bundleCacheKey, codeCache, createRuntimeSnapshot, primeRuntimeCodeCache } from '../host/prepared-isolate.ts';
import type { RuntimeSource } from '../host/prepared-isolate.ts';
import { runInIsolate } from '../host/run-in-isolate.ts';
import { bindHandlers, loadFetchCapability } from './bind-handlers.ts';
import { monotonicMs } from './clock.ts';
import type { CallRequest, FromWorker, ToWorker, WireCallRequest } from './messages.ts';

if (process.send === undefined) {
  process.stderr.write('sandbox worker: must be started by the Paddock supervisor (no IPC channel)\n');
  process.exit(2);
}

// If the machine runs out of memory, the kernel's OOM killer takes a worker (whose calls fail and
// which is replaced) before the service or anything else. Raising one's own score needs no privilege.
try {
  writeFileSync('/proc/self/oom_score_adj', '1000');
} catch {
  // not Linux, or /proc not mounted: the RSS watch and the memory cgroup still apply
}

/**
 * A message to the supervisor. Once the supervisor is gone (the service exited), nothing is sent
 * and a failed write is dropped: without the callback Node raises it as an unhandled 'error' event,
 * and a worker exiting that way printed an EPIPE stack to the service's stderr. 'disconnect' ends
 * the worker.
 */
const send = (message: FromWorker): void => {
  if (process.connected) process.send?.(message, undefined, undefined, () => undefined);
};

/** The runtime isolates boot; it gains a snapshot once the worker has made and checked one. */
let runtime: RuntimeSource | undefined;
/** Bundle sources by hash, as the supervisor's record for this worker says (sandbox/pool/bundle-cache.ts). */
const bundles = new Map<string, string>();
let warm: WarmIsolates | undefined;
/** The bundle the warm pool compiles ahead: the last tool bundle this worker kept and ran. */
let expectedHash: string | undefined;
const running = new Map<number, AbortController>();
/**
 * How long after ready the worker starts its one-time background work (the runtime snapshot, then
 * undici): its first calls (a replacement's, after a crash) go first.
 */
const BACKGROUND_DELAY_MS = 100;

const audit = { record: (record: AuditRecord) => { send({ type: 'audit', record }); } };

/**
 * How long a call's guest must stay idle before the supervisor hears of it. A guest that computes
 * can look idle for one CPU poll (~10 ms) while its isolate waits on this thread (setting the call
 * up) or on a loaded machine's scheduler; each such blip would let the supervisor start another
 * CPU-bound call beside it. An idle that lasts is the guest awaiting I/O or a timer.
 */
const IDLE_CONFIRM_MS = 25;

/**
 * Tells the supervisor when a call's guest turns idle (once it stayed so IDLE_CONFIRM_MS) or busy
 * again (at once, when it had been told idle). `stop` cancels a pending report: nothing follows the result.
 */
function activityReporter(id: number): { onBusyChange: (busy: boolean) => void; stop: () => void } {
  let toldBusy = true; // a call starts busy
  let pendingIdle: NodeJS.Timeout | undefined;
  const cancel = (): void => {
    clearTimeout(pendingIdle);
    pendingIdle = undefined;
  };
  return {
    onBusyChange: (busy) => {
      cancel();
      if (busy) {
        if (!toldBusy) send({ type: 'activity', id, busy: true });
        toldBusy = true;
      } else {
        pendingIdle = setTimeout(() => {
          pendingIdle = undefined;
          toldBusy = false;
          send({ type: 'activity', id, busy: false });
        }, IDLE_CONFIRM_MS);
      }
    },
    stop: cancel,
  };
}

/**
 * A 0.1 ms sleep between a reply and the work after it, when no other call is running here. The
 * reply wakes the coordinator, and Linux tends to wake it on this worker's CPU (wake-affine); had
 * this worker gone straight on to dispose and refill (~3.5 ms of CPU), the coordinator would wait
 * for it, and an idle machine's calls took 4-5 ms instead of ~1.5 in one case out of ten (measured,
 * paced echo: p50 1.91 -> 1.45 ms, p90 5.34 -> 1.80, p99 6.16 -> 3.96). Sleeping hands the CPU
 * over. Not while other calls run: then the pool is busy, the coordinator is awake anyway, and
 * sleeping after every reply cost throughput.
 */
const YIELD_MS = 0.1;
const YIELD_CELL = new Int32Array(new SharedArrayBuffer(4));

/** Work that can wait until replies are out: isolates to dispose, then the warm pool's refill. */
const afterReply: (() => void)[] = [];
let afterReplyScheduled = false;

function scheduleAfterReply(task: () => void): void {
  afterReply.push(task);
  if (afterReplyScheduled) return;
  afterReplyScheduled = true;
  // At once, not after a delay: a 1-2 ms delay let the coordinator read a paced call's reply sooner,
  // but back-to-back calls then met this worker still refilling (measured: p50 1.7-2.1 -> 2.0-3.8 ms).
  setImmediate(() => {
    afterReplyScheduled = false;
    if (running.size === 0) Atomics.wait(YIELD_CELL, 0, 0, YIELD_MS);
    for (const run of afterReply.splice(0)) run();
    warm?.refill();
  });
}

/**
 * The call with its bundle's code, or undefined when this worker does not hold it. `keep`: the
 * supervisor records the bundle as held here, so its V8 code cache is kept too (and dropped with it).
 */
function resolveBundle(request: WireCallRequest): { request: CallRequest; keep: boolean } | undefined {
  for (const hash of request.forget ?? []) {
    bundles.delete(hash);
    codeCache.delete(bundleCacheKey(hash));
    if (expectedHash === hash) {
      expectedHash = undefined;
      warm?.expect(undefined);
    }
  }
  const { forget: _forget, bundle, ...rest } = request;
  const code = bundle.code ?? bundles.get(bundle.hash);
  if (code === undefined) return undefined;
  if (bundle.code !== undefined && bundle.keep) bundles.set(bundle.hash, bundle.code);
  return { request: { ...rest, bundle: { code, hash: bundle.hash, filename: bundle.filename } }, keep: bundle.keep };
}

async function runCall(id: number, request: CallRequest, keepCode: boolean, receivedAt: number): Promise<void> {
  const controller = new AbortController();
  running.set(id, controller);
  const bound = bindHandlers(request, audit);
  const activity = activityReporter(id);
  const boundAt = monotonicMs();
  let dispose: (() => void) | undefined;
  try {
    if (runtime === undefined) throw new Error('worker not initialised');
    const prepared = warm?.take(request.limits.heapMiB, runtime.hash);
    const takenAt = monotonicMs();
    const outcome = await runInIsolate({
      runtime,
      bundle: request.bundle,
      input: request.input,
      cacheCode: keepCode,
      limits: request.limits,
      handlers: bound.handlers,
      signal: controller.signal,
      onUpdate: (text) => { send({ type: 'update', id, text }); },
      onLog: (level, text) => { send({ type: 'log', id, level, text }); },
      onBusyChange: activity.onBusyChange,
      deferDispose: (disposeLater) => { dispose = disposeLater; },
    }, prepared);
    const { phases } = outcome;
    const repliedAt = monotonicMs();
    const timings = {
      receivedAt, repliedAt, bind: boundAt - receivedAt, isolate: takenAt - boundAt + phases.prepare, cold: phases.cold,
      compile: phases.compile, run: phases.run, invoke: phases.invoke, finish: phases.finish,
      rest: repliedAt - takenAt - phases.prepare - phases.compile - phases.run - phases.invoke - phases.finish,
    };
    send({
      type: 'result', id,
      reply: outcome.ok
        ? { ok: true, value: outcome.value, cpuMs: outcome.cpuMs, timings }
        : { ok: false, error: { kind: outcome.error.kind, message: outcome.error.message, details: { ...outcome.error.details } }, cpuMs: outcome.cpuMs, timings },
    });
  } finally {
    activity.stop();
    bound.revoke();
    running.delete(id);
    // Tools are called again and again (an agent's loop, a program's requests): the next isolates compile this one ahead.
    if (keepCode && request.input.kind !== 'exec' && expectedHash !== request.bundle.hash) {
      expectedHash = request.bundle.hash;
      warm?.expect(request.bundle);
    }
    scheduleAfterReply(dispose ?? (() => undefined));
  }
}

/**
 * One-time work kept off the start-up path: the runtime's code cache (primed after ready, not
 * before: a replacement after a crash served its first call ~25 ms sooner, measured 175-235 vs
 * 215-244 ms p50; only the first isolates compile the runtime without it), the runtime snapshot (the supervisor hears before and
 * after, so a worker that dies making it turns snapshots off for its replacements), node:crypto and
 * the net capability (undici), then the compiled modules to the supervisor's compile cache
 * (./entry.js) for the next worker. A worker is killed, never exits on its own, and Node
 * writes that cache only at exit.
 */
async function afterReady(initRuntime: RuntimeSource, heapMiB: number, snapshot: boolean): Promise<void> {
  await primeRuntimeCodeCache(initRuntime, heapMiB).catch(() => undefined);
  if (snapshot) {
    send({ type: 'snapshot', state: 'creating' });
    try {
      const made = await createRuntimeSnapshot(initRuntime, heapMiB);
      if (runtime?.hash === initRuntime.hash) {
        runtime = { ...initRuntime, snapshot: made };
        warm?.useRuntime(runtime);
      }
      send({ type: 'snapshot', state: 'ready' });
    } catch (error) {
      send({ type: 'snapshot', state: 'failed', message: error instanceof Error ? error.message : String(error) });
    }
  }
  try {
    // Touching the Web Crypto global loads node:crypto (the randomBytes op's), off a call's path.
    crypto.getRandomValues(new Uint8Array(1));
    await loadFetchCapability();
    flushCompileCache();
  } catch {
    // Loaded again on the first fetch, which reports the failure to its call.
  }
}

process.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'init': {
      const { runtime: initRuntime, warm: warmOptions, snapshot } = message;
      runtime = initRuntime;
      warm?.close();
      warm = undefined;
      expectedHash = undefined;
      if (warmOptions.count > 0) warm = new WarmIsolates(initRuntime, warmOptions.heapMiB, warmOptions.count);
      send({ type: 'ready' });
      setTimeout(() => { void afterReady(initRuntime, warmOptions.heapMiB, snapshot); }, BACKGROUND_DELAY_MS);
      break;
    }
    case 'call': {
      const receivedAt = monotonicMs();
      const resolved = resolveBundle(message.request);
      if (resolved === undefined) {
        send({ type: 'need-code', id: message.id });
        break;
      }
      runCall(message.id, resolved.request, resolved.keep, receivedAt).catch((error: unknown) => {
        // runInIsolate turns guest failures into outcomes; reaching here is a bug in the host.
        process.stderr.write(`sandbox worker: call ${message.id} failed in the host: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
        send({ type: 'result', id: message.id, reply: { ok: false, error: { kind: 'crashed', message: 'The sandbox host failed while running the call.', details: {} }, cpuMs: 0 } });
      });
      break;
    }
    case 'abort':
      running.get(message.id)?.abort();
      break;
  }
});

// The coordinator went away: nothing left to serve.
process.on('disconnect', () => { process.exit(0); });
