import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import type { AuditSink } from '../audit.ts';
import { monotonicMs } from '../worker/clock.ts';
import type { CallReply, CallRequest, FromWorker, ToWorker, WireCallRequest, WorkerReply } from '../worker/messages.ts';
import { DEFAULT_BUNDLE_CACHE, WorkerBundles } from './bundle-cache.ts';
import type { BundleCacheLimits } from './bundle-cache.ts';
import { openMemoryCgroups } from './memory-cgroup.ts';
import type { MemoryCgroupSetting, MemoryCgroups, WorkerCgroup } from './memory-cgroup.ts';

export interface WorkerPoolOptions {
  /** The guest runtime script every isolate boots (sandbox/bundler/guest-runtime.ts). */
  runtime: { code: string; hash: string };
  /** Worker processes. @defaultValue one per core */
  size?: number;
  /**
   * CPU-busy calls one worker runs at once (each isolate has its own thread). A call counts from
   * dispatch until its worker reports its guest idle (awaiting a fetch, a timer, another host
   * operation), and again once it reports it busy; idle calls leave room for more. A call that turns
   * busy again is never preempted, so calls that alternate may briefly exceed it. @defaultValue 4
   */
  callsPerWorker?: number;
  /**
   * Calls one worker holds at once, busy or idle: bounds the worker's memory, as every call in flight
   * keeps its isolate. Measured with a granted fetch pending, a call adds ~2.2-2.5 MiB, so 256 add
   * ~560-640 MiB to a worker's ~120 MiB: under the default 1024 MiB RSS ceiling, with room for
   * calls that allocate more. @defaultValue 256
   */
  maxCallsPerWorker?: number;
  /** Prepared isolates each worker keeps ready for calls with this heap size. @defaultValue 64 MiB, 2 */
  warm?: { heapMiB: number; count: number };
  /**
   * Memory ceiling per worker, in MiB. Where a memory cgroup is available (./memory-cgroup.ts) the
   * kernel holds each worker to it; otherwise the supervisor kills and replaces a worker whose RSS
   * is above it, checked every 250 ms. @defaultValue 1024
   */
  rssLimitMiB?: number;
  /** Where workers' memory cgroups go: found (`auto`), none (`off`), or a delegated cgroup directory. @defaultValue 'auto' */
  memoryCgroup?: MemoryCgroupSetting;
  /**
   * How many nice steps below this process workers run (at most nice 19): when tools keep every
   * core busy, the service still gets the CPU first. 0: the same priority. @defaultValue 10
   */
  niceSteps?: number;
  /** How long past a call's wall limit its worker may stay silent before it is killed. @defaultValue 2000 */
  killGraceMs?: number;
  audit: AuditSink;
  /** Operational events (worker started, crashed, killed) for the service log. */
  onEvent?: (event: PoolEvent) => void;
  /** Where the worker entry lives; tests may point elsewhere. */
  workerEntry?: URL;
  /** Tool bundles each worker holds, so their code crosses once per worker. @defaultValue 256 bundles, 32 MiB */
  bundleCache?: BundleCacheLimits;
  /**
   * Workers make a startup snapshot of the runtime once ready and prepare isolates from it (~20% less
   * CPU, half the memory per isolate). Turned off for later workers if making one failed or killed
   * a worker. @defaultValue true
   */
  snapshot?: boolean;
}

export type PoolEvent =
  | { type: 'memory-ceiling'; enforcedBy: 'cgroup-v1' | 'cgroup-v2' | 'rss-watch'; limitMiB: number; detail: string }
  | { type: 'worker-started'; pid: number }
  | { type: 'snapshot-disabled'; pid: number; reason: string }
  | { type: 'worker-exited'; pid: number; code: number | null; signal: string | null; failedCalls: number; overMemoryCeiling: boolean }
  | { type: 'worker-killed'; pid: number; reason: string };

export interface PoolCall {
  request: CallRequest;
  signal?: AbortSignal | undefined;
  onUpdate?: ((text: string) => void) | undefined;
  onLog?: ((level: string, text: string) => void) | undefined;
}

interface InFlight {
  id: number;
  call: PoolCall;
  queuedAt: number;
  sentAt: number;
  resolve: (reply: CallReply) => void;
  deadline: number;
  onAbort: () => void;
  /** Counted in its worker's `busy`: from dispatch until the worker reports its guest idle, and again when busy. */
  busy: boolean;
}

interface Worker {
  process: ChildProcess;
  ready: Promise<void>;
  /** Set once `ready` resolved: calls prefer workers that can take them now over ones still starting. */
  isReady: boolean;
  /** The bundles this worker holds (mirrors the worker's own record). */
  bundles: WorkerBundles;
  calls: Map<number, InFlight>;
  /** How many of `calls` are CPU-busy (bounded by callsPerWorker; `calls.size` by maxCallsPerWorker). */
  busy: number;
  exited: boolean;
  /** Why the supervisor killed it, so its calls can be told. */
  killReason?: { callId: number | undefined; message: string; kind: 'timeout' | 'crashed' };
  /** Where its runtime snapshot stands (sandbox/worker/main.ts afterReady). */
  snapshot: 'none' | 'creating' | 'ready' | 'failed';
  /** Its memory cgroup, when the kernel enforces the ceiling. */
  cgroup: WorkerCgroup | undefined;
}

const DEFAULT_ENTRY = new URL('../worker/entry.js', import.meta.url);
const WATCH_INTERVAL_MS = 250;

/**
 * Supervises the sandbox worker processes: spreads calls over them, relays updates, and when a
 * worker dies (crash, RSS ceiling, stuck past its wall limit) fails only its calls with `crashed`
 * (never retried behind the caller's back) and starts a replacement at once.
 */
export class WorkerPool {
  readonly #options: Required<Omit<WorkerPoolOptions, 'onEvent'>> & Pick<WorkerPoolOptions, 'onEvent'>;
  readonly #workers: Worker[] = [];
  readonly #queue: { call: PoolCall; resolve: (reply: CallReply) => void; queuedAt: number }[] = [];
  readonly #watch: NodeJS.Timeout;
  /**
   * Node's compile cache for the workers' modules (type-stripped TypeScript and V8 code), private to
   * this pool (mkdtemp: a new 0700 folder, so no other user can plant code in it), passed as the
   * worker's argument (sandbox/worker/entry.js): a replacement worker loads its modules from it,
   * ~150 ms sooner. Undefined if it could not be created.
   */
  readonly #compileCache: string | undefined;
  /** Removes the compile cache if the process exits without close() (a CLI run that just ends). */
  readonly #removeCompileCache = (): void => {
    if (this.#compileCache !== undefined) rmSync(this.#compileCache, { recursive: true, force: true });
  };
  #nextId = 1;
  /** Workers' cgroups being removed; close() waits for them. */
  readonly #removals = new Set<Promise<void>>();
  /** Where workers get a kernel-enforced memory ceiling; undefined: the RSS watch alone. */
  #cgroups: MemoryCgroups | undefined;
  /** Whether new workers make a runtime snapshot; off for good once making one failed or killed a worker. */
  #snapshots: boolean;
  /** Where the search for a worker starts: ties go round, so refills spread over the workers. */
  #turn = 0;
  #closed = false;

  constructor(options: WorkerPoolOptions) {
    this.#options = {
      size: Math.max(1, availableParallelism()),
      callsPerWorker: 4,
      maxCallsPerWorker: 256,
      rssLimitMiB: 1024,
      killGraceMs: 2000,
      warm: { heapMiB: 64, count: 2 },
      workerEntry: DEFAULT_ENTRY,
      bundleCache: DEFAULT_BUNDLE_CACHE,
      snapshot: true,
      memoryCgroup: 'auto',
      niceSteps: 10,
      ...options,
    };
    this.#cgroups = this.#openCgroups();
    this.#snapshots = this.#options.snapshot;
    this.#compileCache = privateFolder('paddock-worker-compile-cache-');
    if (this.#compileCache !== undefined) process.once('exit', this.#removeCompileCache);
    for (let index = 0; index < this.#options.size; index++) this.#workers.push(this.#spawn());
    this.#watch = setInterval(() => { void this.#inspect(); }, WATCH_INTERVAL_MS);
    this.#watch.unref();
  }

  /** Resolves when every worker has started and loaded the runtime. */
  async ready(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.ready));
  }

  /** PIDs of the live workers (for operators' metrics, and tests that kill one). */
  pids(): number[] {
    return this.#workers.flatMap((worker) => (worker.process.pid === undefined ? [] : [worker.process.pid]));
  }

  get inFlight(): number {
    return this.#workers.reduce((sum, worker) => sum + worker.calls.size, 0);
  }

  /** The per-worker bounds in effect (given or default), for benchmarks and operators' logs. */
  get bounds(): { callsPerWorker: number; maxCallsPerWorker: number } {
    return { callsPerWorker: this.#options.callsPerWorker, maxCallsPerWorker: this.#options.maxCallsPerWorker };
  }

  /**
   * Runs a call on the least busy worker; queues while every worker is at `callsPerWorker` busy calls
   * or `maxCallsPerWorker` calls in all.
   */
  run(call: PoolCall): Promise<CallReply> {
    if (this.#closed) return Promise.resolve(failure('crashed', 'The sandbox is shutting down.'));
    if (call.signal?.aborted === true) return Promise.resolve(failure('aborted', 'The call was aborted.'));
    return new Promise((resolve) => {
      this.#queue.push({ call, resolve, queuedAt: monotonicMs() });
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#watch);
    for (const queued of this.#queue.splice(0)) queued.resolve(failure('crashed', 'The sandbox is shutting down.'));
    await Promise.all(this.#workers.map(async (worker) => {
      if (worker.exited) return;
      const exited = new Promise<void>((resolve) => worker.process.once('exit', () => { resolve(); }));
      worker.process.kill('SIGKILL');
      await exited;
    }));
    await Promise.all(this.#removals);
    process.removeListener('exit', this.#removeCompileCache);
    this.#removeCompileCache();
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const worker = this.#leastBusy();
      if (worker === undefined) return;
      const next = this.#queue.shift();
      if (next === undefined) return;
      if (next.call.signal?.aborted === true) {
        next.resolve(failure('aborted', 'The call was aborted.'));
        continue;
      }
      this.#start(worker, next.call, next.resolve, next.queuedAt);
    }
  }

  /**
   * A worker with room (under `callsPerWorker` busy calls and `maxCallsPerWorker` calls in all):
   * ready ones first (a replacement still starting would hold a call for hundreds of ms), then the
   * fewest busy calls (they compete for its CPU; idle ones only hold memory), then the fewest calls.
   * Ties go round, so a sequence of calls alternates workers and each worker's warm pool has the
   * others' calls' time to refill.
   */
  #leastBusy(): Worker | undefined {
    const workers = this.#workers;
    const { callsPerWorker, maxCallsPerWorker } = this.#options;
    let best: Worker | undefined;
    for (let offset = 0; offset < workers.length; offset++) {
      const worker = workers[(this.#turn + offset) % workers.length];
      if (worker === undefined || worker.exited || worker.busy >= callsPerWorker || worker.calls.size >= maxCallsPerWorker) continue;
      if (best === undefined || (worker.isReady && !best.isReady) || (worker.isReady === best.isReady && lessBusy(worker, best))) best = worker;
    }
    if (best !== undefined) this.#turn = (workers.indexOf(best) + 1) % workers.length;
    return best;
  }

  #start(worker: Worker, call: PoolCall, resolve: (reply: CallReply) => void, queuedAt: number): void {
    const id = this.#nextId++;
    let sent = false;
    let settled = false;
    const onAbort = (): void => {
      // Not yet handed to the worker (it is still starting): end it here and never send it.
      if (sent) this.#send(worker, { type: 'abort', id });
      else entry.resolve(failure('aborted', 'The call was aborted.'));
    };
    const entry: InFlight = {
      id, call, onAbort, queuedAt, sentAt: 0, busy: true,
      deadline: Number.POSITIVE_INFINITY, // set when the worker receives it: its start-up time is not the call's
      resolve: (reply) => {
        if (settled) return;
        settled = true;
        call.signal?.removeEventListener('abort', onAbort);
        worker.calls.delete(id);
        if (entry.busy) worker.busy--;
        resolve(reply);
        this.#dispatch();
      },
    };
    worker.calls.set(id, entry);
    worker.busy++;
    call.signal?.addEventListener('abort', onAbort, { once: true });
    worker.ready.then(() => {
      if (settled) return;
      sent = true;
      entry.deadline = Date.now() + call.request.limits.wallTimeMs + this.#options.killGraceMs;
      entry.sentAt = monotonicMs();
      this.#send(worker, { type: 'call', id, request: this.#wireRequest(worker, call) });
    }, () => undefined);
  }

  /** The request as it crosses: the bundle's code only when this worker does not hold it. */
  #wireRequest(worker: Worker, call: PoolCall, resend = false): WireCallRequest {
    const { bundle, ...rest } = call.request;
    // An exec snippet runs once: always sent, never held.
    if (call.request.input.kind === 'exec') return { ...rest, bundle: { hash: bundle.hash, filename: bundle.filename, code: bundle.code, keep: false } };
    if (resend) worker.bundles.lost(bundle.hash);
    const { send, keep, forget } = worker.bundles.use(bundle.hash, bundle.code.length);
    return {
      ...rest,
      bundle: send ? { hash: bundle.hash, filename: bundle.filename, code: bundle.code, keep } : { hash: bundle.hash, filename: bundle.filename, keep },
      ...(forget.length === 0 ? {} : { forget }),
    };
  }

  #send(worker: Worker, message: ToWorker): void {
    if (worker.exited || !worker.process.connected) return;
    worker.process.send(message, (error) => {
      if (error !== null) worker.process.kill('SIGKILL'); // a broken channel: the exit handler fails its calls
    });
  }

  #spawn(): Worker {
    const args = [String(this.#options.niceSteps), ...(this.#compileCache === undefined ? [] : [this.#compileCache])];
    const child = fork(this.#options.workerEntry, args, {
      // No Node startup snapshot: isolated-vm is not compatible with it. The worker's own heap is bounded too.
      execArgv: ['--no-node-snapshot', '--max-old-space-size=512', '--disable-warning=ExperimentalWarning'],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: {},
    });
    const cgroup = this.#placeInCgroup(child.pid);
    let markReady: () => void = () => undefined;
    let markFailed: (error: Error) => void = () => undefined;
    const ready = new Promise<void>((resolve, reject) => { markReady = resolve; markFailed = reject; });
    ready.catch(() => undefined);
    const worker: Worker = { process: child, ready, isReady: false, bundles: new WorkerBundles(this.#options.bundleCache), calls: new Map(), busy: 0, exited: false, snapshot: 'none', cgroup };

    child.on('message', (message: FromWorker) => {
      switch (message.type) {
        case 'ready':
          worker.isReady = true;
          markReady();
          // Calls queued while every worker was busy or starting may go now.
          this.#dispatch();
          break;
        case 'snapshot':
          worker.snapshot = message.state;
          if (message.state === 'failed') this.#disableSnapshots(child.pid, `making the runtime snapshot failed: ${message.message ?? 'unknown error'}`);
          break;
        case 'need-code': {
          const entry = worker.calls.get(message.id);
          if (entry !== undefined) this.#send(worker, { type: 'call', id: message.id, request: this.#wireRequest(worker, entry.call, true) });
          break;
        }
        case 'update':
          worker.calls.get(message.id)?.call.onUpdate?.(message.text);
          break;
        case 'log':
          worker.calls.get(message.id)?.call.onLog?.(message.level, message.text);
          break;
        case 'activity': {
          const entry = worker.calls.get(message.id);
          if (entry === undefined || entry.busy === message.busy) break;
          entry.busy = message.busy;
          worker.busy += message.busy ? 1 : -1;
          // An idle call leaves its CPU share to queued calls.
          if (!message.busy) this.#dispatch();
          break;
        }
        case 'audit':
          this.#options.audit.record(message.record);
          break;
        case 'result': {
          const entry = worker.calls.get(message.id);
          entry?.resolve(withTimings(message.reply, entry, monotonicMs()));
          break;
        }
      }
    });
    child.on('error', () => { child.kill('SIGKILL'); });
    child.once('exit', (code, signal) => {
      worker.exited = true;
      // A V8 fatal error aborts the process; a SIGKILL came from someone else (this supervisor, the OOM killer, an operator).
      if (worker.snapshot === 'creating' && signal !== 'SIGKILL') this.#disableSnapshots(child.pid, `a worker died making the runtime snapshot (${describeExit(code, signal)})`);
      markFailed(new Error('worker exited'));
      // A SIGKILL the supervisor did not send, in a cgroup whose OOM killer fired: the kernel held the ceiling.
      const overMemoryCeiling = worker.killReason === undefined && signal === 'SIGKILL' && (worker.cgroup?.oomKills() ?? 0) > 0;
      if (overMemoryCeiling) {
        worker.killReason = { callId: undefined, kind: 'crashed', message: `the worker's memory reached its ceiling of ${this.#options.rssLimitMiB} MiB and the kernel stopped it` };
      }
      if (worker.cgroup !== undefined) {
        const removal: Promise<void> = worker.cgroup.remove().finally(() => { this.#removals.delete(removal); });
        this.#removals.add(removal);
      }
      const failed = [...worker.calls.values()];
      for (const entry of failed) {
        const reason = worker.killReason;
        entry.resolve(reason !== undefined && reason.callId === entry.id
          ? failure(reason.kind, reason.message)
          : failure('crashed', `The sandbox worker running this call stopped (${reason?.message ?? describeExit(code, signal)}); the call was not retried.`));
      }
      if (child.pid !== undefined && !this.#closed) this.#options.onEvent?.({ type: 'worker-exited', pid: child.pid, code, signal, failedCalls: failed.length, overMemoryCeiling });
      const index = this.#workers.indexOf(worker);
      if (index !== -1 && !this.#closed) {
        this.#workers[index] = this.#spawn();
        this.#dispatch();
      }
    });
    this.#send(worker, { type: 'init', runtime: this.#options.runtime, warm: this.#options.warm, snapshot: this.#snapshots });
    if (child.pid !== undefined) this.#options.onEvent?.({ type: 'worker-started', pid: child.pid });
    return worker;
  }

  #openCgroups(): MemoryCgroups | undefined {
    const limitMiB = this.#options.rssLimitMiB;
    const opened = openMemoryCgroups(this.#options.memoryCgroup);
    this.#options.onEvent?.(opened.ok
      ? { type: 'memory-ceiling', enforcedBy: `cgroup-v${opened.cgroups.version}`, limitMiB, detail: `a cgroup per worker in ${opened.cgroups.base}` }
      : { type: 'memory-ceiling', enforcedBy: 'rss-watch', limitMiB, detail: `RSS checked every ${WATCH_INTERVAL_MS} ms; no memory cgroup: ${opened.reason}` });
    return opened.ok ? opened.cgroups : undefined;
  }

  /** Moves a new worker into its own memory cgroup; a refusal leaves later workers to the RSS watch alone. */
  #placeInCgroup(pid: number | undefined): WorkerCgroup | undefined {
    if (this.#cgroups === undefined || pid === undefined) return undefined;
    try {
      return this.#cgroups.place(pid, this.#options.rssLimitMiB);
    } catch (error) {
      this.#cgroups = undefined;
      this.#options.onEvent?.({
        type: 'memory-ceiling', enforcedBy: 'rss-watch', limitMiB: this.#options.rssLimitMiB,
        detail: `placing a worker in a memory cgroup failed (${error instanceof Error ? error.message : String(error)}); RSS checked every ${WATCH_INTERVAL_MS} ms`,
      });
      return undefined;
    }
  }

  /** Kills workers that hold a call past its wall limit (stuck in native code) or exceed the RSS ceiling. */
  async #inspect(): Promise<void> {
    const now = Date.now();
    for (const worker of this.#workers) {
      if (worker.exited || worker.killReason !== undefined) continue;
      const overdue = [...worker.calls.values()].find((entry) => entry.deadline < now);
      if (overdue !== undefined) {
        this.#kill(worker, {
          callId: overdue.id, kind: 'timeout',
          message: `The call did not stop at its wall-time limit of ${overdue.call.request.limits.wallTimeMs} ms; its sandbox worker was killed.`,
        });
        continue;
      }
      // In a memory cgroup the kernel holds the ceiling, counting what the worker itself charged;
      // RSS also counts the Node binary's shared pages, charged elsewhere.
      if (worker.cgroup !== undefined) continue;
      const rss = await residentMiB(worker.process.pid);
      if (rss !== undefined && rss > this.#options.rssLimitMiB) {
        this.#kill(worker, { callId: undefined, kind: 'crashed', message: `the worker's memory reached ${Math.round(rss)} MiB, over its ceiling of ${this.#options.rssLimitMiB} MiB` });
      }
    }
  }

  #disableSnapshots(pid: number | undefined, reason: string): void {
    if (!this.#snapshots) return;
    this.#snapshots = false;
    this.#options.onEvent?.({ type: 'snapshot-disabled', pid: pid ?? 0, reason });
  }

  #kill(worker: Worker, reason: NonNullable<Worker['killReason']>): void {
    worker.killReason = reason;
    if (worker.process.pid !== undefined) this.#options.onEvent?.({ type: 'worker-killed', pid: worker.process.pid, reason: reason.message });
    worker.process.kill('SIGKILL');
  }
}

/** Fewer busy calls, then fewer calls in all. */
function lessBusy(worker: Worker, than: Worker): boolean {
  return worker.busy < than.busy || (worker.busy === than.busy && worker.calls.size < than.calls.size);
}

/** The worker's reply with its timings completed by the supervisor's side of the trip. */
function withTimings(reply: WorkerReply, entry: InFlight, receivedAt: number): CallReply {
  const { timings, ...rest } = reply;
  if (timings === undefined) return rest;
  const { receivedAt: workerReceivedAt, repliedAt, ...phases } = timings;
  return {
    ...rest,
    timings: { queued: entry.sentAt - entry.queuedAt, toWorker: workerReceivedAt - entry.sentAt, ...phases, fromWorker: receivedAt - repliedAt },
  };
}

function privateFolder(prefix: string): string | undefined {
  try {
    return mkdtempSync(path.join(tmpdir(), prefix));
  } catch {
    return undefined; // workers start without a compile cache
  }
}

function failure(kind: 'crashed' | 'aborted' | 'timeout', message: string): CallReply {
  return { ok: false, error: { kind, message, details: {} }, cpuMs: 0 };
}

function describeExit(code: number | null, signal: string | null): string {
  return signal !== null ? `killed by ${signal}` : `exit code ${code ?? 'unknown'}`;
}

/** Resident set size from /proc (Linux); undefined where it cannot be read. */
async function residentMiB(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const statm = await readFile(`/proc/${pid}/statm`, 'utf8');
    const pages = Number(statm.split(' ')[1]);
    return Number.isFinite(pages) ? (pages * 4096) / (1024 * 1024) : undefined;
  } catch {
    return undefined;
  }
}
