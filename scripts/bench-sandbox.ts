/**
 * Sandbox benchmark (issue 4): where the time of one tool call goes, and how Paddock compares with
 * spawning `deno run` per call. One run, variants interleaved so a noisy neighbour hits them all:
 *
 *   1. In-worker isolate phases (in this process, as a worker runs them): a cold call (isolate
 *      created inside the call) vs a call on an isolate prepared ahead (the warm pool) vs one
 *      prepared from a startup snapshot of the guest runtime (`ivm.Isolate.createSnapshot`), with
 *      the preparation cost broken down by step; and the V8 code cache: first compile vs later ones.
 *   2. End to end through the worker pool: `sandbox.runTool` of a trivial (echo) tool, a pure-compute tool and a tool
 *      doing one granted fetch to a loopback server, at concurrency 1, 2, 4 and 8.
 *   3. The alternative: `deno run` per call on the same module and params (as scripts/deno-run.ts
 *      runs it), at the same concurrency. Where each Paddock call's time went comes from the
 *      timings the sandbox reports with every outcome (supervisor queue, IPC each way, the phases
 *      inside the worker).
 *   4. Memory: 500 calls in flight at once, each awaiting a granted fetch to a loopback server that
 *      answers none until all have arrived; RSS of the coordinator (this process) and every worker
 *      summed from /proc every 20 ms. Run first, before section 1's in-process isolates.
 *   5. Crash recovery: SIGKILL the only worker, time until a call succeeds on its replacement.
 *
 *   npm run bench:sandbox -- [--iterations N] [--quick] [--json results.json] [--workers N] [--warm N]
 *                            [--in-flight N] [--crashes N] [--only isolate,e2e,inflight,crash]
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AuditRecord } from '../sandbox/audit.ts';
import { buildGuestRuntime } from '../sandbox/bundler/guest-runtime.ts';
import { bundleToolModule } from '../sandbox/bundler/tool-bundle.ts';
import type { Bundle } from '../sandbox/bundler/tool-bundle.ts';
import { resolveGrant } from '../sandbox/grants/index.ts';
import type { PermissionSet } from '../sandbox/grants/index.ts';
import { bootRuntime, codeCache, prepareIsolate } from '../sandbox/host/prepared-isolate.ts';
import type { PreparedIsolate } from '../sandbox/host/prepared-isolate.ts';
import { runInIsolate } from '../sandbox/host/run-in-isolate.ts';
import { RUNTIME_WARMUP } from '../sandbox/host/runtime-warmup.ts';
import type { IsolateOutcome } from '../sandbox/host/run-in-isolate.ts';
import { compileCachedSync, ivm, refuse } from '../sandbox/host/transfer.ts';
import { DEFAULT_LIMITS } from '../sandbox/limits.ts';
import { startSandbox } from '../sandbox/sandbox.ts';
import type { Sandbox, ToolOutcome } from '../sandbox/sandbox.ts';
import { bindHandlers } from '../sandbox/worker/bind-handlers.ts';
import { integerOption, parseBenchArgs, summarize } from './bench-common.ts';
import type { Summary } from './bench-common.ts';
import { denoBinary } from './deno-binary.ts';
import { denoHarness } from './deno-run.ts';
import type { CallRequest, WireGrant } from '../sandbox/worker/messages.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const DENO = denoBinary();
/** Flags the issue compares against: no config, lock file, remote or npm resolution. */
const DENO_RUN_FLAGS = ['run', '--no-config', '--no-lock', '--no-remote', '--no-npm', '--no-prompt', '--quiet'];
const CONCURRENCY = [1, 2, 4, 8] as const;
const COMPUTE_N = 1000;
const COMPUTE_EXPECTED = String(((COMPUTE_N - 1) * COMPUTE_N * (2 * COMPUTE_N - 1)) / 6);
const FETCH_BODY = 'pong';
const PREPARE_TIMEOUT_MS = 5000;
/** Idle time between paced calls when section 1 did not measure how long preparing an isolate takes. */
const DEFAULT_PACED_GAP_MS = 15;

// ---------------------------------------------------------------------------------------------
// Options

export interface BenchOptions {
  /** Samples per in-worker variant; sandbox calls per (tool, concurrency) cell. */
  iterations: number;
  /** Rounds the end-to-end cells are split into (each round runs every cell once, order rotated). */
  rounds: number;
  /** Deno calls per (tool, concurrency) cell (each spawns a process). */
  denoCalls: number;
  workers: number;
  warmIsolates: number;
  /** Calls held in flight at once in section 4 (each awaiting a slow granted fetch). */
  inFlight: number;
  /** Workers killed one after the other in section 5. */
  crashes: number;
  /** Sections to run (all by default). */
  sections: ReadonlySet<Section>;
  json: string | undefined;
  quick: boolean;
}

export const SECTIONS = ['isolate', 'e2e', 'inflight', 'crash'] as const;
export type Section = (typeof SECTIONS)[number];

const USAGE = `usage: npm run bench:sandbox -- [--iterations N] [--quick] [--json FILE] [--workers N] [--warm N]
                              [--in-flight N] [--crashes N] [--only isolate,e2e,inflight,crash]

  --iterations N  samples per in-worker variant and sandbox calls per (tool, concurrency) cell
                  (default 400, about 1-2 minutes on 2 cores; deno run gets N/5 calls per cell)
  --quick         a few iterations only (proves the benchmark works; the numbers mean little)
  --json FILE     also write the results as JSON
  --workers N     sandbox worker processes (default: one per core)
  --warm N        prepared isolates each worker keeps ready (default 2, the sandbox default)
  --in-flight N   calls held in flight at once, each awaiting a slow granted fetch (default 500)
  --crashes N     workers killed (SIGKILL) one after the other to time recovery (default 7)
  --only LIST     run only these sections: isolate (1, in-worker phases and code cache), e2e (2-3),
                  inflight (4), crash (5)
`;

export function parseOptions(argv: readonly string[]): BenchOptions {
  const values = parseBenchArgs(argv, {
    iterations: { type: 'string' },
    workers: { type: 'string' },
    warm: { type: 'string' },
    'in-flight': { type: 'string' },
    crashes: { type: 'string' },
    only: { type: 'string' },
  }, USAGE);
  const quick = values.quick;
  const iterations = integerOption('iterations', values.iterations, quick ? 8 : 400);
  return {
    iterations,
    rounds: quick ? 2 : Math.max(2, Math.min(10, Math.floor(iterations / 10))),
    denoCalls: Math.max(quick ? 2 : 8, Math.ceil(iterations / 5)),
    workers: integerOption('workers', values.workers, availableParallelism()),
    warmIsolates: integerOption('warm', values.warm, 2, 0),
    inFlight: integerOption('in-flight', values['in-flight'], quick ? 40 : 500),
    crashes: integerOption('crashes', values.crashes, quick ? 2 : 7),
    sections: parseSections(values.only),
    json: values.json,
    quick,
  };
}

function parseSections(raw: string | undefined): ReadonlySet<Section> {
  if (raw === undefined) return new Set(SECTIONS);
  const chosen = new Set<Section>();
  for (const name of raw.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const section = SECTIONS.find((known) => known === name);
    if (section === undefined) throw new Error(`--only: unknown section "${name}" (known: ${SECTIONS.join(', ')})`);
    chosen.add(section);
  }
  if (chosen.size === 0) throw new Error('--only: name at least one section');
  return chosen;
}

// ---------------------------------------------------------------------------------------------
// Statistics

class Samples {
  readonly #by = new Map<string, number[]>();

  add(name: string, value: number): void {
    let list = this.#by.get(name);
    if (list === undefined) this.#by.set(name, list = []);
    list.push(value);
  }

  summary(name: string): Summary {
    return summarize(this.#by.get(name) ?? []);
  }

  has(name: string): boolean {
    return (this.#by.get(name)?.length ?? 0) > 0;
  }
}

/** Wall time (ms) and process CPU time (ms, every thread: isolated-vm runs isolates on its own). */
async function measure<T>(run: () => Promise<T>): Promise<{ value: T; wallMs: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await run();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { value, wallMs, cpuMs: (used.user + used.system) / 1000 };
}

/** The same variants each iteration, starting one further along each time. */
function rotated<T>(items: readonly T[], by: number): T[] {
  const shift = by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

// ---------------------------------------------------------------------------------------------
// Tool modules, written to a scratch folder and bundled as the registry bundles them

/** The issue's trivial tool: no work of its own, so a call measures the sandbox alone. */
const ECHO_SOURCE = `export const name = "bench_echo";
export const description = "Greets by name (benchmark).";
export const parameters = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
export const permissions = {};
export default function execute(params: { name: string }): string {
  return "hello " + params.name;
}
`;
const ECHO_EXPECTED = 'hello bench';

const COMPUTE_SOURCE = `export const name = "bench_compute";
export const description = "Sums the squares below n (benchmark).";
export const parameters = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
export const permissions = {};
export default function execute(params: { n: number }): string {
  let sum = 0;
  for (let i = 0; i < params.n; i++) sum += i * i;
  return String(sum);
}
`;

const FETCH_SOURCE = `export const name = "bench_fetch";
export const description = "Fetches a URL and returns its body (benchmark).";
export const parameters = { type: "object", properties: { url: { type: "string" } }, required: ["url"] };
export const permissions = { net: ["127.0.0.1"] };
export default async function execute(params: { url: string }): Promise<string> {
  const response = await fetch(params.url);
  return await response.text();
}
`;

/** A larger bundle (a tool that pulls in a helper library) for the code-cache measurement. */
function largeSource(functions: number): string {
  const lines = ['export const name = "bench_large";', 'export const description = "A large bundle (benchmark).";',
    'export const parameters = { type: "object", properties: {} };', 'export const permissions = {};'];
  for (let index = 0; index < functions; index++) {
    lines.push(`export function helper${index}(input: string, times: number): string {
  const parts: string[] = [];
  for (let i = 0; i < times; i++) parts.push(input.slice(i % (input.length || 1)) + ${index} + "-" + i.toString(36));
  return parts.filter((part) => part.length % ${(index % 5) + 2} !== 0).map((part) => part.toUpperCase()).join("/");
}`);
  }
  lines.push(`const table = [${Array.from({ length: functions }, (_, index) => `helper${index}`).join(', ')}];`);
  lines.push('export default function execute(): string { return table[0]("x", 3); }');
  return lines.join('\n');
}

interface ToolUnderTest {
  id: 'echo' | 'compute' | 'fetch';
  bundle: Bundle;
  params: unknown;
  grant: WireGrant;
  expected: string;
  denoArgs: string[];
}

// ---------------------------------------------------------------------------------------------
// 1. In-worker isolate phases

type Runtime = { code: string; hash: string };
type IsolateSource = { kind: 'eval'; runtime: Runtime } | { kind: 'snapshot'; runtime: Runtime; snapshot: ivm.ExternalCopy<ArrayBuffer> };

/**
 * prepareIsolate (sandbox/host/prepared-isolate.ts), step by step with a timer on each step, and
 * able to start from a startup snapshot instead of evaluating the runtime script: the snapshot
 * already holds the evaluated runtime, so only the doors and boot (which captures them) remain.
 */
function prepareStepwise(source: IsolateSource, heapMiB: number): { prepared: PreparedIsolate; steps: Record<string, number> } {
  const steps: Record<string, number> = {};
  let mark = performance.now();
  const lap = (name: string): void => {
    const now = performance.now();
    steps[name] = now - mark;
    mark = now;
  };
  const isolate = source.kind === 'snapshot'
    ? new ivm.Isolate({ memoryLimit: heapMiB, snapshot: source.snapshot })
    : new ivm.Isolate({ memoryLimit: heapMiB });
  lap('create isolate');
  try {
    // The synchronous calls prepareIsolate makes (sandbox/host/prepared-isolate.ts), step by step.
    const context = isolate.createContextSync();
    lap('create context');
    if (source.kind === 'eval') {
      const script = compileCachedSync(isolate, source.runtime.code, 'paddock:runtime', codeCache, `runtime:${source.runtime.hash}`);
      lap('compile runtime (code cache)');
      script.runSync(context, { timeout: PREPARE_TIMEOUT_MS });
      lap('run runtime script');
    }
    const stepNames = { 'install doors': 'install doors', boot: 'boot (Web APIs, Deno)', 'take entry functions': 'take entry functions' } as const;
    const prepared = bootRuntime(isolate, context, heapMiB, source.runtime.hash, (step) => { lap(stepNames[step]); });
    return { prepared, steps };
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}


/**
 * A pool of prepared isolates like WarmIsolates (sandbox/host/prepared-isolate.ts), with the refill
 * left to the caller (at take, as WarmIsolates does, or after the call) and a way to wait until it
 * is full again, so its background work never overlaps another variant's measurement.
 */
class BenchPool {
  readonly #prepare: () => Promise<PreparedIsolate>;
  readonly #target: number;
  readonly #ready: PreparedIsolate[] = [];
  #filling = 0;
  #failure: unknown;
  #waiters: (() => void)[] = [];

  constructor(prepare: () => Promise<PreparedIsolate>, target: number) {
    this.#prepare = prepare;
    this.#target = target;
    this.refill();
  }

  take(): PreparedIsolate | undefined {
    return this.#ready.shift();
  }

  refill(): void {
    while (this.#ready.length + this.#filling < this.#target) {
      this.#filling++;
      this.#prepare().then((prepared) => { this.#ready.push(prepared); }, (error: unknown) => { this.#failure = error; }).finally(() => {
        this.#filling--;
        for (const wake of this.#waiters.splice(0)) wake();
      }).catch(() => undefined);
    }
  }

  async whenFull(): Promise<void> {
    while (this.#ready.length < this.#target) {
      if (this.#filling === 0) throw new Error(`the pool cannot refill: ${String(this.#failure)}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  async close(): Promise<void> {
    while (this.#filling > 0) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    for (const prepared of this.#ready.splice(0)) if (!prepared.isolate.isDisposed) prepared.isolate.dispose();
  }
}

interface InWorkerResult {
  samples: Samples;
  stepNames: Record<'eval' | 'snapshot' | 'snapshotWarmed', string[]>;
  snapshotBytes: number;
  warmedSnapshotError: string | undefined;
}

function isolateCall(runtime: Runtime, tool: ToolUnderTest, callId: string): { request: CallRequest; revoke: () => void; call: Parameters<typeof runInIsolate>[0] } {
  const request: CallRequest = {
    identity: { callId, tool: tool.id, caller: 'bench' },
    bundle: { code: tool.bundle.code, hash: tool.bundle.hash, filename: tool.bundle.filename },
    input: { kind: 'tool', params: tool.params, callId, sessionId: null },
    grant: tool.grant,
    limits: { ...DEFAULT_LIMITS },
    cwd: ROOT,
    secrets: {},
  };
  const bound = bindHandlers(request, { record: () => undefined });
  return {
    request,
    revoke: () => { bound.revoke(); },
    call: { runtime, bundle: request.bundle, input: request.input, limits: request.limits, handlers: bound.handlers },
  };
}

function expectContent(outcome: IsolateOutcome, expected: string, what: string): void {
  if (!outcome.ok) throw new Error(`${what}: the call failed (${outcome.error.kind}: ${outcome.error.message})`);
  const content = 'content' in outcome.value ? outcome.value.content : undefined;
  if (content !== expected) throw new Error(`${what}: expected "${expected}", got ${JSON.stringify(content)}`);
}

async function benchInWorker(runtime: Runtime, tool: ToolUnderTest, options: BenchOptions, progress: (text: string) => void): Promise<InWorkerResult> {
  const samples = new Samples();
  const heapMiB = DEFAULT_LIMITS.heapMiB;
  const snapshotRuns = options.quick ? 1 : 5;
  let snapshot: ivm.ExternalCopy<ArrayBuffer> | undefined;
  let warmedSnapshot: ivm.ExternalCopy<ArrayBuffer> | undefined;
  let warmedSnapshotError: string | undefined;
  for (let index = 0; index < snapshotRuns; index++) {
    const plain = await measure(() => Promise.resolve(ivm.Isolate.createSnapshot([{ code: runtime.code, filename: 'paddock:runtime' }])));
    samples.add('createSnapshot', plain.wallMs);
    snapshot?.release();
    snapshot = plain.value;
    try {
      const warmed = await measure(() => Promise.resolve(ivm.Isolate.createSnapshot([{ code: runtime.code, filename: 'paddock:runtime' }], RUNTIME_WARMUP)));
      samples.add('createSnapshot (warm-up)', warmed.wallMs);
      warmedSnapshot?.release();
      warmedSnapshot = warmed.value;
    } catch (error) {
      warmedSnapshotError = error instanceof Error ? error.message : String(error);
    }
  }
  if (snapshot === undefined) throw new Error('no snapshot was created');
  const snapshotBytes = snapshot.copy().byteLength;

  const stepNames: InWorkerResult['stepNames'] = { eval: [], snapshot: [], snapshotWarmed: [] };
  const sources: Record<keyof InWorkerResult['stepNames'], IsolateSource | undefined> = {
    eval: { kind: 'eval', runtime },
    snapshot: { kind: 'snapshot', runtime, snapshot },
    snapshotWarmed: warmedSnapshot === undefined ? undefined : { kind: 'snapshot', runtime, snapshot: warmedSnapshot },
  };

  let sequence = 0;
  /** Runs one call (fresh isolate, or the prepared one given) and checks its result. */
  const callOnce = async (name: string, prepared?: PreparedIsolate): Promise<void> => {
    const { call, revoke } = isolateCall(runtime, tool, `iso-${++sequence}`);
    try {
      const timed = await measure(() => runInIsolate(call, prepared));
      expectContent(timed.value, tool.expected, name);
      samples.add(`${name}: call`, timed.wallMs);
      samples.add(`${name}: call cpu`, timed.cpuMs);
    } finally {
      revoke();
    }
  };
  /** Prepares with the source's steps timed, then either disposes (timed) or runs a call on it. */
  const prepareVariant = async (name: string, source: IsolateSource, key: keyof InWorkerResult['stepNames'], thenCall: boolean): Promise<void> => {
    const timed = await measure(() => Promise.resolve(prepareStepwise(source, heapMiB)));
    const { prepared, steps } = timed.value;
    samples.add(`${name}: prepare`, timed.wallMs);
    samples.add(`${name}: prepare cpu`, timed.cpuMs);
    if (stepNames[key].length === 0) stepNames[key] = Object.keys(steps);
    for (const [step, ms] of Object.entries(steps)) samples.add(`${name}: step ${step}`, ms);
    if (thenCall) {
      await callOnce(name, prepared);
      return;
    }
    samples.add(`${name}: heap used MiB`, prepared.isolate.getHeapStatisticsSync().used_heap_size / 1048576);
    const disposed = await measure(() => {
      prepared.isolate.dispose();
      return Promise.resolve();
    });
    samples.add(`${name}: step dispose`, disposed.wallMs);
  };

  const variants: [string, () => Promise<void>][] = [
    ['cold', () => callOnce('cold')],
    ['cold, empty code cache', async () => {
      codeCache.clear();
      await callOnce('cold, empty code cache');
    }],
    ['warm', async () => {
      const timed = await measure(() => prepareIsolate(runtime, heapMiB));
      samples.add('warm: prepare', timed.wallMs);
      samples.add('warm: prepare cpu', timed.cpuMs);
      await callOnce('warm', timed.value);
    }],
    ['snapshot', () => prepareVariant('snapshot', sources.snapshot ?? refuse('no snapshot'), 'snapshot', true)],
    ['steps: eval', () => prepareVariant('steps: eval', sources.eval ?? refuse('no runtime'), 'eval', false)],
    ['steps: snapshot', () => prepareVariant('steps: snapshot', sources.snapshot ?? refuse('no snapshot'), 'snapshot', false)],
  ];
  const warmedSource = sources.snapshotWarmed;
  if (warmedSource !== undefined) {
    variants.push(['snapshot, warmed', () => prepareVariant('snapshot, warmed', warmedSource, 'snapshotWarmed', true)]);
    variants.push(['steps: snapshot, warmed', () => prepareVariant('steps: snapshot, warmed', warmedSource, 'snapshotWarmed', false)]);
  }
  // Pools of 2 (the sandbox default), as a worker uses them: the call takes an isolate while the
  // pool refills in the background, at take (WarmIsolates before this series) or once the call has
  // ended (WarmIsolates now: the worker refills after the reply).
  const snapshotForPool = warmedSource ?? sources.snapshot ?? refuse('no snapshot');
  const pools: { name: string; pool: BenchPool; refillAt: 'take' | 'after' }[] = [
    { name: 'pool: eval, refill at take', pool: new BenchPool(() => prepareIsolate(runtime, heapMiB), 2), refillAt: 'take' },
    { name: 'pool: eval, refill after call', pool: new BenchPool(() => prepareIsolate(runtime, heapMiB), 2), refillAt: 'after' },
    { name: 'pool: snapshot, refill at take', pool: new BenchPool(() => Promise.resolve(prepareStepwise(snapshotForPool, heapMiB).prepared), 2), refillAt: 'take' },
  ];
  for (const { name, pool, refillAt } of pools) {
    variants.push([name, async () => {
      await pool.whenFull();
      const prepared = pool.take();
      if (prepared === undefined) throw new Error(`${name}: the pool was empty`);
      if (refillAt === 'take') pool.refill();
      await callOnce(name, prepared);
      if (refillAt === 'after') pool.refill();
      await pool.whenFull();
    }]);
  }

  try {
    // Warm-up (not recorded): JIT the host side, fill the code cache.
    for (let index = 0; index < 3; index++) {
      const { call, revoke } = isolateCall(runtime, tool, `iso-warmup-${index}`);
      expectContent(await runInIsolate(call), tool.expected, 'warm-up');
      revoke();
    }
    for (let iteration = 0; iteration < options.iterations; iteration++) {
      for (const [, run] of rotated(variants, iteration)) await run();
      if (iteration % 100 === 99) progress(`in-worker ${iteration + 1}/${options.iterations}`);
    }
  } finally {
    for (const { pool } of pools) await pool.close();
    snapshot.release();
    warmedSnapshot?.release();
  }
  return { samples, stepNames, snapshotBytes, warmedSnapshotError };
}

// ---------------------------------------------------------------------------------------------
// 1b. V8 code cache: first compile of a script vs a compile that consumes the cache

interface CodeCacheRow {
  script: string;
  kib: number;
  compileMiss: Summary;
  compileHit: Summary;
  compileRunMiss: Summary;
  compileRunHit: Summary;
  rejected: number;
  acceptedInSnapshotIsolate: boolean | undefined;
}

async function benchCodeCache(scripts: { name: string; code: string }[], snapshotFor: () => ivm.ExternalCopy<ArrayBuffer>, iterations: number): Promise<CodeCacheRow[]> {
  const caches = new Map<string, ArrayBuffer>();
  // The cache as production makes it: produced by the first compile, before the script ran.
  for (const script of scripts) {
    const isolate = new ivm.Isolate({ memoryLimit: DEFAULT_LIMITS.heapMiB });
    const compiled = (await isolate.compileScript(script.code, { filename: script.name, produceCachedData: true })) as ivm.Script & ivm.CachedDataResult;
    const data = compiled.cachedData?.copy();
    isolate.dispose();
    if (data === undefined) throw new Error(`V8 produced no code cache for ${script.name}`);
    caches.set(script.name, data);
  }
  const samples = new Samples();
  const rejected = new Map<string, number>();
  const once = async (script: { name: string; code: string }, hit: boolean): Promise<void> => {
    const isolate = new ivm.Isolate({ memoryLimit: DEFAULT_LIMITS.heapMiB });
    try {
      const context = await isolate.createContext();
      const data = caches.get(script.name);
      const options: ivm.ScriptInfo & { cachedDataRejected?: boolean } = hit && data !== undefined
        ? { filename: script.name, cachedData: new ivm.ExternalCopy(data) }
        : { filename: script.name, produceCachedData: true };
      const started = performance.now();
      const compiled = await isolate.compileScript(script.code, options);
      const compiledAt = performance.now();
      await compiled.run(context, { timeout: PREPARE_TIMEOUT_MS });
      const ranAt = performance.now();
      if (options.cachedDataRejected === true) rejected.set(script.name, (rejected.get(script.name) ?? 0) + 1);
      const key = `${script.name}: ${hit ? 'hit' : 'miss'}`;
      samples.add(`${key} compile`, compiledAt - started);
      samples.add(`${key} compile+run`, ranAt - started);
    } finally {
      isolate.dispose();
    }
  };
  const variants = scripts.flatMap((script) => [() => once(script, false), () => once(script, true)]);
  for (let iteration = 0; iteration < iterations; iteration++) {
    for (const run of rotated(variants, iteration)) await run();
  }
  // Would a cache made by a plain isolate still be accepted by isolates created from a snapshot?
  const accepted = new Map<string, boolean>();
  for (const script of scripts) {
    const data = caches.get(script.name);
    if (data === undefined || script.name === 'guest runtime') continue;
    const isolate = new ivm.Isolate({ memoryLimit: DEFAULT_LIMITS.heapMiB, snapshot: snapshotFor() });
    const options: ivm.ScriptInfo & { cachedDataRejected?: boolean } = { filename: script.name, cachedData: new ivm.ExternalCopy(data) };
    await isolate.compileScript(script.code, options);
    accepted.set(script.name, options.cachedDataRejected !== true);
    isolate.dispose();
  }
  return scripts.map((script) => ({
    script: script.name,
    kib: Buffer.byteLength(script.code) / 1024,
    compileMiss: samples.summary(`${script.name}: miss compile`),
    compileHit: samples.summary(`${script.name}: hit compile`),
    compileRunMiss: samples.summary(`${script.name}: miss compile+run`),
    compileRunHit: samples.summary(`${script.name}: hit compile+run`),
    rejected: rejected.get(script.name) ?? 0,
    acceptedInSnapshotIsolate: accepted.get(script.name),
  }));
}

// ---------------------------------------------------------------------------------------------
// 2 and 3. End to end: sandbox.runTool through the worker pool, and `deno run` per call

interface CellResult {
  tool: ToolUnderTest['id'];
  runner: 'paddock' | 'deno';
  /** Concurrent calls in flight; 'paced' is sequential with idle gaps so the warm pool keeps up. */
  concurrency: number | 'paced';
  latency: Summary;
  /** Paddock: the isolate's own CPU time per call, as the worker reports it (ms). */
  isolateCpu: Summary | null;
  /**
   * Paddock: where each call's time went (ms; outcome.timings, see sandbox/worker/messages.ts), plus
   * `coordinator` (the rest of runTool's duration) and `cold` (share of calls that found no warm isolate).
   */
  phases: Record<string, Summary> | null;
  /** Median over rounds of calls completed per second of wall time. */
  throughput: number;
  calls: number;
}

/** `total` calls over `lanes` lanes that each start the next call as soon as theirs ends. */
async function closedLoop(lanes: number, total: number, one: (index: number) => Promise<void>, gapMs = 0): Promise<{ elapsedMs: number; latencies: number[] }> {
  let next = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(lanes, total) }, async () => {
    while (next < total) {
      const index = next++;
      const callStarted = performance.now();
      await one(index);
      latencies.push(performance.now() - callStarted);
      if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
  }));
  return { elapsedMs: performance.now() - started, latencies };
}

function runDeno(tool: ToolUnderTest, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(DENO, tool.denoArgs, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0 && stdout === `${tool.expected}\n`) resolve();
      else reject(new Error(`deno run (${tool.id}) exited ${String(code)}: ${JSON.stringify(stdout)} ${stderr.trim()}`));
    });
  });
}

async function benchEndToEnd(sandbox: Sandbox, tools: ToolUnderTest[], options: BenchOptions, denoEnv: NodeJS.ProcessEnv, pacedGapMs: number, progress: (text: string) => void): Promise<CellResult[]> {
  let sequence = 0;
  const isolateCpu = new Map<string, number[]>();
  const phases = new Map<string, Samples>();
  let currentCell = '';
  const paddockOnce = (tool: ToolUnderTest) => async (): Promise<void> => {
    const callId = `bench-${++sequence}`;
    const outcome = await sandbox.runTool({
      identity: { callId, tool: tool.id, caller: 'bench' },
      bundle: tool.bundle, params: tool.params, grant: tool.grant, cwd: ROOT, secrets: {},
    });
    if (!outcome.ok) throw new Error(`sandbox.runTool (${tool.id}) failed: ${outcome.error.kind}: ${outcome.error.message}`);
    if (outcome.content !== tool.expected) throw new Error(`sandbox.runTool (${tool.id}): expected "${tool.expected}", got ${JSON.stringify(outcome.content)}`);
    let cpu = isolateCpu.get(currentCell);
    if (cpu === undefined) isolateCpu.set(currentCell, cpu = []);
    cpu.push(outcome.cpuMs);
    const { timings } = outcome;
    if (timings !== undefined) {
      let cell = phases.get(currentCell);
      if (cell === undefined) phases.set(currentCell, cell = new Samples());
      let accounted = 0;
      for (const [phase, value] of Object.entries(timings)) {
        if (typeof value !== 'number') continue;
        cell.add(phase, value);
        accounted += value;
      }
      cell.add('coordinator', outcome.durationMs - accounted);
      cell.add('cold', timings.cold ? 1 : 0);
    }
  };

  // Warm-up, not recorded: worker JIT, code caches, Deno's transpile cache.
  for (const tool of tools) {
    for (let index = 0; index < (options.quick ? 4 : 30); index++) await paddockOnce(tool)();
    for (let index = 0; index < 2; index++) await runDeno(tool, denoEnv);
  }

  interface Cell { tool: ToolUnderTest; runner: 'paddock' | 'deno'; concurrency: number | 'paced'; perRound: number; gapMs: number }
  const keyOf = (cell: Cell): string => `${cell.tool.id}/${cell.runner}/${String(cell.concurrency)}`;
  const cells: Cell[] = [];
  for (const tool of tools) {
    for (const concurrency of CONCURRENCY) {
      cells.push({ tool, runner: 'paddock', concurrency, perRound: Math.max(8 * concurrency, Math.ceil(options.iterations / options.rounds)), gapMs: 0 });
      cells.push({ tool, runner: 'deno', concurrency, perRound: Math.max((options.quick ? 2 : 3) * concurrency, Math.ceil(options.denoCalls / options.rounds)), gapMs: 0 });
    }
    cells.push({ tool, runner: 'paddock', concurrency: 'paced', perRound: Math.max(4, Math.ceil(options.iterations / options.rounds / 2)), gapMs: pacedGapMs });
  }
  const latencies = new Map<Cell, number[]>();
  const throughputs = new Map<Cell, number[]>();
  for (let round = 0; round < options.rounds; round++) {
    for (const cell of rotated(cells, round * 3)) {
      const one = cell.runner === 'paddock' ? paddockOnce(cell.tool) : () => runDeno(cell.tool, denoEnv);
      const lanes = cell.concurrency === 'paced' ? 1 : cell.concurrency;
      currentCell = keyOf(cell);
      const { elapsedMs, latencies: measured } = await closedLoop(lanes, cell.perRound, one, cell.gapMs);
      latencies.set(cell, [...(latencies.get(cell) ?? []), ...measured]);
      throughputs.set(cell, [...(throughputs.get(cell) ?? []), (cell.perRound * 1000) / elapsedMs]);
    }
    progress(`end to end round ${round + 1}/${options.rounds}`);
  }
  return cells.map((cell) => ({
    tool: cell.tool.id,
    runner: cell.runner,
    concurrency: cell.concurrency,
    latency: summarize(latencies.get(cell) ?? []),
    isolateCpu: cell.runner === 'paddock' ? summarize(isolateCpu.get(keyOf(cell)) ?? []) : null,
    phases: cell.runner === 'paddock' ? phaseSummaries(phases.get(keyOf(cell))) : null,
    throughput: cell.concurrency === 'paced' ? Number.NaN : summarize(throughputs.get(cell) ?? []).median,
    calls: (latencies.get(cell) ?? []).length,
  }));
}

/** Phases in the order a call goes through them (sandbox/worker/messages.ts CallTimings). */
const PHASES = ['queued', 'toWorker', 'bind', 'isolate', 'compile', 'run', 'invoke', 'finish', 'rest', 'fromWorker', 'coordinator', 'cold'] as const;

function phaseSummaries(samples: Samples | undefined): Record<string, Summary> | null {
  if (samples === undefined) return null;
  const out: Record<string, Summary> = {};
  for (const phase of PHASES) if (samples.has(phase)) out[phase] = samples.summary(phase);
  return out;
}

/** A child that answers each call message with a result message of a tool's size, and does nothing else. */
const ECHO_CHILD = `
process.on('message', (message) => {
  process.send({ type: 'result', id: message.id, reply: { ok: true, value: { content: '${COMPUTE_EXPECTED}', isError: false, metadata: {}, terminate: false }, cpuMs: 0.5 } });
});
process.on('disconnect', () => { process.exit(0); });
`;

/**
 * The IPC share of a sandbox call: a round trip of the same request message to a forked Node child
 * with the worker pool's channel settings (advanced serialization), answered at once. With a gap,
 * both processes sleep between round trips, as in the paced cells: the floor of a paced call's trip.
 */
async function benchIpc(request: CallRequest, iterations: number, gapMs = 0): Promise<Summary> {
  const child = spawn(process.execPath, ['-e', ECHO_CHILD], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced', env: {} });
  try {
    const pending = new Map<number, () => void>();
    child.on('message', (message: { id: number }) => { pending.get(message.id)?.(); });
    return await timeRepeated(iterations, gapMs, (id) => new Promise<void>((resolve) => {
      pending.set(id, resolve);
      child.send({ type: 'call', id, request });
    }));
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.disconnect();
    await exited;
  }
}

/**
 * The other hop of a paced call: one trivial task on an isolate's thread and back (isolated-vm
 * runs async work on its own threads), after the same idle gap.
 */
async function benchIsolateHop(iterations: number, gapMs: number): Promise<Summary> {
  const isolate = new ivm.Isolate({ memoryLimit: 16 });
  try {
    const context = await isolate.createContext();
    return await timeRepeated(iterations, gapMs, () => context.eval('0'));
  } finally {
    isolate.dispose();
  }
}

/** Times `once` `iterations` times after 20 untimed runs, sleeping `gapMs` (if any) before each. */
async function timeRepeated(iterations: number, gapMs: number, once: (index: number) => Promise<unknown>): Promise<Summary> {
  const latencies: number[] = [];
  for (let index = 0; index < iterations + 20; index++) {
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    const started = performance.now();
    await once(index);
    if (index >= 20) latencies.push(performance.now() - started);
  }
  return summarize(latencies);
}

// ---------------------------------------------------------------------------------------------
// 4. Many calls in flight at once: the memory of every Paddock process

/**
 * A loopback server in a process of its own (not a Paddock process: not in the RSS sum) that holds
 * every request until told to answer, reporting each arrival.
 */
const SLOW_SERVER = `
const http = require('node:http');
const held = [];
let released = false;
let arrived = 0;
const server = http.createServer((request, response) => {
  arrived++;
  process.send({ arrived });
  if (released) response.end('slow pong');
  else held.push(response);
});
server.keepAliveTimeout = 1;
process.on('message', (message) => {
  if (message.release) { released = true; for (const response of held.splice(0)) response.end('slow pong'); }
  if (message.hold) released = false;
});
process.on('disconnect', () => { process.exit(0); });
server.listen(0, '127.0.0.1', () => { process.send({ port: server.address().port }); });
`;
const SLOW_BODY = 'slow pong';

export interface RssMiB {
  total: number;
  coordinator: number;
  workers: number;
  workerCount: number;
}

export interface InFlightResult {
  calls: number;
  workers: number;
  /** The sandbox's own defaults (not forced): busy calls per worker, and calls per worker in all. */
  callsPerWorker: number;
  maxCallsPerWorker: number;
  ok: number;
  /** Failed calls by error kind. */
  failed: Record<string, number>;
  /** Most requests the slow server held at once: calls that were in flight, each awaiting its fetch. */
  heldAtOnce: number;
  /** From the first call until the server held them all (or gave up waiting). */
  rampMs: number;
  /** From releasing the server until every call had finished. */
  drainMs: number;
  /** RSS summed over the coordinator (this process) and every worker, before the calls. */
  baseline: RssMiB;
  /** The highest sampled sum, with its parts. */
  peak: RssMiB;
  /** Sum of each process's own high-water mark (VmHWM): an upper bound on the peak sum. */
  sumOfHighWaterMiB: number;
  /**
   * PSS summed with every call in flight (/proc/<pid>/smaps_rollup): RSS counts the pages the
   * processes share (the node binary, libraries) once per process, PSS splits them.
   */
  plateauPssMiB: number;
  samples: number;
}

function residentMiBSync(pid: number): number {
  try {
    const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
    return Number.isFinite(pages) ? (pages * 4096) / 1048576 : 0;
  } catch {
    return 0; // gone (a worker replaced between listing and reading)
  }
}

function highWaterMiB(pid: number): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] === undefined ? 0 : Number(match[1]) / 1024;
  } catch {
    return 0;
  }
}

function proportionalMiB(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match?.[1] === undefined ? 0 : Number(match[1]) / 1024;
  } catch {
    return 0;
  }
}

function sampleRss(sandbox: Sandbox): RssMiB {
  const coordinator = residentMiBSync(process.pid);
  const pids = sandbox.pool.pids();
  const workers = pids.reduce((sum, pid) => sum + residentMiBSync(pid), 0);
  return { total: coordinator + workers, coordinator, workers, workerCount: pids.length };
}

interface SlowServer {
  port: number;
  /** Requests waiting for an answer. */
  held: () => number;
  onArrival: (listener: () => void) => void;
  /** Answers what is held, and from now on answers at once. */
  release: () => void;
  /** Holds requests again. */
  hold: () => void;
  stop: () => Promise<void>;
}

async function startSlowServer(): Promise<SlowServer> {
  const child = spawn(process.execPath, ['-e', SLOW_SERVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: {} });
  let arrived = 0;
  let released = 0;
  const listeners: (() => void)[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.on('message', (message: { port?: number; arrived?: number }) => {
      if (message.port !== undefined) resolve(message.port);
      if (message.arrived !== undefined) {
        arrived = message.arrived;
        for (const listener of listeners) listener();
      }
    });
  });
  return {
    port,
    held: () => Math.max(0, arrived - released),
    onArrival: (listener) => { listeners.push(listener); },
    release: () => { released = Number.POSITIVE_INFINITY; child.send({ release: true }); },
    hold: () => { released = arrived; child.send({ hold: true }); },
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}

/**
 * `count` calls of the fetch tool at once against a server that answers none of them until all are
 * in flight; meanwhile the RSS of the coordinator and the workers is summed every 20 ms. The
 * sandbox runs with its defaults: a call awaiting its fetch is idle, so callsPerWorker (busy calls)
 * does not hold the others back; maxCallsPerWorker bounds how many one worker holds.
 */
async function benchInFlight(count: number, options: BenchOptions, makeFetchTool: (port: number) => ToolUnderTest, progress: (text: string) => void): Promise<InFlightResult> {
  const server = await startSlowServer();
  const sandbox = await startSandbox({ limits: DEFAULT_LIMITS, audit: { record: () => undefined }, workers: options.workers, warmIsolates: options.warmIsolates });
  const { callsPerWorker, maxCallsPerWorker } = sandbox.pool.bounds;
  try {
    const tool = makeFetchTool(server.port);
    // Warm-up: the bundle reaches every worker, the JIT settles. Released at once.
    server.release();
    for (let index = 0; index < 4 * options.workers; index++) {
      const outcome = await sandbox.runTool({ identity: { callId: `warm-${index}`, tool: tool.id, caller: 'bench' }, bundle: tool.bundle, params: tool.params, grant: tool.grant, cwd: ROOT, secrets: {} });
      if (!outcome.ok || outcome.content !== SLOW_BODY) throw new Error(`in-flight warm-up failed: ${JSON.stringify(outcome)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    server.hold();
    const baseline = sampleRss(sandbox);
    let peak = baseline;
    let samples = 1;
    const sampler = setInterval(() => {
      const sample = sampleRss(sandbox);
      samples++;
      if (sample.total > peak.total) peak = sample;
    }, 20);
    let heldAtOnce = 0;
    let allHeld: () => void = () => undefined;
    const allIn = new Promise<void>((resolve) => { allHeld = resolve; });
    server.onArrival(() => {
      heldAtOnce = Math.max(heldAtOnce, server.held());
      if (server.held() >= count) allHeld();
    });
    const started = performance.now();
    const outcomes = Array.from({ length: count }, (_, index) => sandbox.runTool({
      identity: { callId: `inflight-${index}`, tool: tool.id, caller: 'bench' },
      bundle: tool.bundle, params: tool.params, grant: tool.grant, cwd: ROOT, secrets: {},
    }));
    // The calls' wall limit is 10 s: release well before it, whether or not all arrived.
    await Promise.race([allIn, new Promise((resolve) => setTimeout(resolve, 8000))]);
    const rampMs = performance.now() - started;
    // Hold a moment with everything in flight, so the sampler sees the plateau.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const plateauPssMiB = proportionalMiB(process.pid) + sandbox.pool.pids().reduce((sum, pid) => sum + proportionalMiB(pid), 0);
    progress(`in flight: ${server.held()}/${count} held by the server after ${fmt(rampMs, 0)} ms; releasing`);
    const releasedAt = performance.now();
    server.release();
    const settled = await Promise.all(outcomes);
    const drainMs = performance.now() - releasedAt;
    clearInterval(sampler);
    const sumOfHighWaterMiB = highWaterMiB(process.pid) + sandbox.pool.pids().reduce((sum, pid) => sum + highWaterMiB(pid), 0);
    const failed: Record<string, number> = {};
    let ok = 0;
    for (const outcome of settled) {
      if (outcome.ok && outcome.content === SLOW_BODY) ok++;
      else {
        const kind = outcome.ok ? 'wrong content' : outcome.error.kind;
        failed[kind] = (failed[kind] ?? 0) + 1;
      }
    }
    return { calls: count, workers: options.workers, callsPerWorker, maxCallsPerWorker, ok, failed, heldAtOnce, rampMs, drainMs, baseline, peak, sumOfHighWaterMiB, plateauPssMiB, samples };
  } finally {
    await sandbox.close();
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 5. A worker crash until its replacement serves again

export interface CrashResult {
  kills: number;
  /** From SIGKILL until the supervisor saw the worker exit. */
  exitSeenMs: Summary;
  /** From SIGKILL until the replacement process was spawned. */
  spawnedMs: Summary;
  /** From SIGKILL until a call succeeded on the replacement (calls sent meanwhile fail as crashed and are sent again). */
  servingMs: Summary;
  /** Calls that failed with `crashed` on the way (the ones the dead worker held or was handed). */
  crashedCalls: number;
}

/** One worker, so whatever serves after the kill is the replacement. */
async function benchCrashRecovery(kills: number, tool: ToolUnderTest, options: BenchOptions, progress: (text: string) => void): Promise<CrashResult> {
  const exits = new Map<number, number>();
  const spawns: { pid: number; at: number }[] = [];
  const sandbox = await startSandbox({
    limits: DEFAULT_LIMITS, audit: { record: () => undefined }, workers: 1, warmIsolates: options.warmIsolates,
    onEvent: (event) => {
      if (event.type === 'worker-exited') exits.set(event.pid, performance.now());
      if (event.type === 'worker-started') spawns.push({ pid: event.pid, at: performance.now() });
    },
  });
  const call = (index: number): Promise<ToolOutcome> => sandbox.runTool({
    identity: { callId: `crash-${index}`, tool: tool.id, caller: 'bench' }, bundle: tool.bundle, params: tool.params, grant: tool.grant, cwd: ROOT, secrets: {},
  });
  const exitSeen: number[] = [];
  const spawned: number[] = [];
  const serving: number[] = [];
  let crashedCalls = 0;
  let sequence = 0;
  try {
    for (let kill = 0; kill < kills; kill++) {
      // A settled worker: bundle held, warm pool full.
      for (let index = 0; index < 3; index++) {
        const outcome = await call(++sequence);
        if (!outcome.ok) throw new Error(`crash recovery: a call before the kill failed: ${outcome.error.kind}: ${outcome.error.message}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const [pid] = sandbox.pool.pids();
      if (pid === undefined) throw new Error('crash recovery: no worker');
      const killedAt = performance.now();
      process.kill(pid, 'SIGKILL');
      for (let attempt = 0; ; attempt++) {
        const outcome = await call(++sequence);
        if (outcome.ok) break;
        if (outcome.error.kind !== 'crashed' || attempt > 20) throw new Error(`crash recovery: ${outcome.error.kind}: ${outcome.error.message}`);
        crashedCalls++;
      }
      serving.push(performance.now() - killedAt);
      const exitAt = exits.get(pid);
      if (exitAt !== undefined) exitSeen.push(exitAt - killedAt);
      const replacement = spawns.find((entry) => entry.at >= killedAt);
      if (replacement !== undefined) spawned.push(replacement.at - killedAt);
      progress(`crash ${kill + 1}/${kills}: serving again after ${fmt(serving[serving.length - 1] ?? Number.NaN, 0)} ms`);
    }
    return { kills, exitSeenMs: summarize(exitSeen), spawnedMs: summarize(spawned), servingMs: summarize(serving), crashedCalls };
  } finally {
    await sandbox.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const ratio = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}x` : '-');
const pad = (text: string, width: number): string => (text.length >= width ? text : text + ' '.repeat(width - text.length));
const lpad = (text: string, width: number): string => (text.length >= width ? text : ' '.repeat(width - text.length) + text);

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]): string => cells.map((cell, column) => (column === 0 ? pad(cell, widths[column] ?? 0) : lpad(cell, widths[column] ?? 0))).join('  ').trimEnd();
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].map((text) => `  ${text}`).join('\n');
}

interface Verdict {
  /** Process CPU per prepared isolate, ms (median). */
  prepareCpuMs: { eval: number; snapshot: number; snapshotWarmed: number };
  prepareWallMs: { eval: number; snapshot: number; snapshotWarmed: number };
  callOnPreparedMs: { eval: number; snapshot: number; snapshotWarmed: number };
  /** cores × 1000 / (prepare cpu + call cpu): calls/s the isolate supply allows when CPU is the limit. */
  supplyCeilingCallsPerSec: { cold: number; eval: number; snapshot: number; snapshotWarmed: number };
  /** Call latency (median ms) taking from a pool of 2 while it refills in the background. */
  poolCallMs: { refillAtTake: number; refillAfterCall: number; snapshotRefillAtTake: number };
  snapshotBeatsWarmPool: boolean;
  deferRefillHelps: boolean;
  text: string[];
}

function verdictOf(inWorker: InWorkerResult, cores: number): Verdict {
  const s = inWorker.samples;
  const med = (name: string): number => s.summary(name).median;
  const prepareCpuMs = { eval: med('warm: prepare cpu'), snapshot: med('snapshot: prepare cpu'), snapshotWarmed: med('snapshot, warmed: prepare cpu') };
  const prepareWallMs = { eval: med('warm: prepare'), snapshot: med('snapshot: prepare'), snapshotWarmed: med('snapshot, warmed: prepare') };
  const callOnPreparedMs = { eval: med('warm: call'), snapshot: med('snapshot: call'), snapshotWarmed: med('snapshot, warmed: call') };
  const ceiling = (cpu: number): number => (cores * 1000) / cpu;
  const supplyCeilingCallsPerSec = {
    cold: ceiling(med('cold: call cpu')),
    eval: ceiling(prepareCpuMs.eval + med('warm: call cpu')),
    snapshot: ceiling(prepareCpuMs.snapshot + med('snapshot: call cpu')),
    snapshotWarmed: ceiling(prepareCpuMs.snapshotWarmed + med('snapshot, warmed: call cpu')),
  };
  const best = Number.isFinite(supplyCeilingCallsPerSec.snapshotWarmed) ? Math.max(supplyCeilingCallsPerSec.snapshot, supplyCeilingCallsPerSec.snapshotWarmed) : supplyCeilingCallsPerSec.snapshot;
  const gain = best / supplyCeilingCallsPerSec.eval;
  const callPenalty = Math.min(callOnPreparedMs.snapshot, Number.isFinite(callOnPreparedMs.snapshotWarmed) ? callOnPreparedMs.snapshotWarmed : Number.POSITIVE_INFINITY) - callOnPreparedMs.eval;
  const snapshotBeatsWarmPool = gain >= 1.1 && callPenalty < 0.25;
  const poolCallMs = {
    refillAtTake: med('pool: eval, refill at take: call'),
    refillAfterCall: med('pool: eval, refill after call: call'),
    snapshotRefillAtTake: med('pool: snapshot, refill at take: call'),
  };
  const deferRefillHelps = poolCallMs.refillAfterCall < 0.85 * poolCallMs.refillAtTake;
  const text = [
    `preparing an isolate costs ${fmt(prepareCpuMs.eval)} ms CPU by evaluating the runtime (code cache) vs ${fmt(prepareCpuMs.snapshot)} ms from a snapshot`
      + (Number.isFinite(prepareCpuMs.snapshotWarmed) ? ` (${fmt(prepareCpuMs.snapshotWarmed)} ms from a warmed-up snapshot)` : ''),
    `a call on a prepared isolate takes ${fmt(callOnPreparedMs.eval)} ms (warm pool) vs ${fmt(callOnPreparedMs.snapshot)} ms (snapshot)`
      + (Number.isFinite(callOnPreparedMs.snapshotWarmed) ? ` / ${fmt(callOnPreparedMs.snapshotWarmed)} ms (warmed snapshot)` : ''),
    `isolate supply ceiling on ${cores} core(s): cold ${fmt(supplyCeilingCallsPerSec.cold, 0)}, warm pool ${fmt(supplyCeilingCallsPerSec.eval, 0)}, snapshot ${fmt(supplyCeilingCallsPerSec.snapshot, 0)}`
      + (Number.isFinite(supplyCeilingCallsPerSec.snapshotWarmed) ? `, warmed snapshot ${fmt(supplyCeilingCallsPerSec.snapshotWarmed, 0)}` : '') + ' calls/s',
    `with a pool of 2 a call takes ${fmt(poolCallMs.refillAtTake)} ms when the refill starts at take (the old WarmIsolates), ${fmt(poolCallMs.refillAfterCall)} ms when it starts after the call (now), `
      + `${fmt(poolCallMs.snapshotRefillAtTake)} ms from a snapshot pool refilled at take (the pool hides creation latency, not its CPU)`,
    !snapshotBeatsWarmPool
      ? `=> a startup snapshot does not beat warm pool + code cache (supply ${fmt(gain)}x, call ${callPenalty >= 0 ? '+' : ''}${fmt(callPenalty)} ms); keep the current path`
      : gain >= 1.5
        ? `=> a startup snapshot clearly beats warm pool + code cache: ${fmt(gain)}x the isolate supply at the same call latency; prepare pooled isolates from a snapshot`
        : `=> a startup snapshot is a modest win over warm pool + code cache: ${fmt(gain)}x the isolate supply (${fmt((1 - 1 / gain) * 100, 0)}% less CPU per isolate), `
          + `no latency gain (call ${callPenalty >= 0 ? '+' : ''}${fmt(callPenalty)} ms); worth it only while throughput is bound by isolate supply`,
    deferRefillHelps
      ? `=> the refill competes with the call it was taken for: start it after the call ends (${fmt(poolCallMs.refillAtTake)} -> ${fmt(poolCallMs.refillAfterCall)} ms)`
      : `=> starting the refill after the call instead of at take changes little (${fmt(poolCallMs.refillAtTake)} vs ${fmt(poolCallMs.refillAfterCall)} ms)`,
  ];
  return { prepareCpuMs, prepareWallMs, callOnPreparedMs, supplyCeilingCallsPerSec, poolCallMs, snapshotBeatsWarmPool, deferRefillHelps, text };
}

interface Machine {
  cores: number;
  cpuModel: string;
  node: string;
  v8: string;
  deno: string;
  isolatedVm: string;
  platform: string;
  loadAverageStart: number[];
  loadAverageEnd: number[];
}

interface ReportParts {
  isolate?: { inWorker: InWorkerResult; codeCacheRows: CodeCacheRow[]; verdict: Verdict } | undefined;
  e2e?: { cells: CellResult[]; ipc: Summary; pacedIpc: Summary; pacedHop: Summary; pacedGapMs: number } | undefined;
  inFlight?: InFlightResult | undefined;
  crash?: CrashResult | undefined;
}

function printReport(machine: Machine, options: BenchOptions, parts: ReportParts, elapsedS: number): string {
  const out: string[] = [];
  out.push(`Paddock sandbox benchmark: ${machine.cores} cores (${machine.cpuModel}), ${machine.platform}`);
  out.push(`node ${machine.node} (V8 ${machine.v8}), ${machine.deno}, isolated-vm ${machine.isolatedVm}; load ${machine.loadAverageStart.map((value) => value.toFixed(2)).join(' ')}`);
  out.push(`iterations ${options.iterations}${options.quick ? ' (quick: numbers mean little)' : ''}, ${options.rounds} rounds; sandbox: ${options.workers} workers, ${options.warmIsolates} warm isolates each, heap ${DEFAULT_LIMITS.heapMiB} MiB`);
  out.push('');

  if (parts.isolate !== undefined) {
    const { inWorker, codeCacheRows } = parts.isolate;
    const s = inWorker.samples;
    out.push('1. In-worker isolate phases (this process, as a worker runs them; ms; cpu = process CPU, all threads)');
    const row = (label: string, name: string, cpuName?: string): string[] => {
      const summary = s.summary(name);
      return [label, fmt(summary.median), fmt(summary.p90), cpuName === undefined ? '' : fmt(s.summary(cpuName).median), String(summary.n)];
    };
    const rows: string[][] = [
      row('cold call: create+boot+compile+run+dispose (code cache primed)', 'cold: call', 'cold: call cpu'),
      row('cold call, empty code cache (first call of a worker)', 'cold, empty code cache: call', 'cold, empty code cache: call cpu'),
      row('prepare isolate: eval runtime + code cache (prepareIsolate)', 'warm: prepare', 'warm: prepare cpu'),
      row('prepare isolate: from startup snapshot', 'snapshot: prepare', 'snapshot: prepare cpu'),
    ];
    if (s.has('snapshot, warmed: prepare')) rows.push(row('prepare isolate: from warmed-up snapshot', 'snapshot, warmed: prepare', 'snapshot, warmed: prepare cpu'));
    rows.push(row('call on prepared isolate (warm pool): compile+run+dispose', 'warm: call', 'warm: call cpu'));
    rows.push(row('call on snapshot-prepared isolate', 'snapshot: call', 'snapshot: call cpu'));
    if (s.has('snapshot, warmed: call')) rows.push(row('call on warmed-snapshot-prepared isolate', 'snapshot, warmed: call', 'snapshot, warmed: call cpu'));
    rows.push(row('pool of 2, refill starts at take (the old WarmIsolates): call', 'pool: eval, refill at take: call', 'pool: eval, refill at take: call cpu'));
    rows.push(row('pool of 2, refill after the call ends (WarmIsolates now): call', 'pool: eval, refill after call: call', 'pool: eval, refill after call: call cpu'));
    rows.push(row(`pool of 2 from ${s.has('snapshot, warmed: call') ? 'warmed ' : ''}snapshot, refill at take: call`, 'pool: snapshot, refill at take: call', 'pool: snapshot, refill at take: call cpu'));
    rows.push(row(`createSnapshot of the runtime (once per worker; ${fmt(inWorker.snapshotBytes / 1048576, 1)} MiB)`, 'createSnapshot'));
    if (s.has('createSnapshot (warm-up)')) rows.push(row('createSnapshot with warm-up script', 'createSnapshot (warm-up)'));
    out.push(table(['phase', 'median', 'p90', 'cpu p50', 'n'], rows));
    out.push('');
    out.push('   where preparation goes (median ms per step)');
    const variantsForSteps: [string, string, keyof InWorkerResult['stepNames']][] = [['eval + code cache', 'steps: eval', 'eval'], ['snapshot', 'steps: snapshot', 'snapshot']];
    if (inWorker.stepNames.snapshotWarmed.length > 0) variantsForSteps.push(['warmed snapshot', 'steps: snapshot, warmed', 'snapshotWarmed']);
    const allSteps = [...new Set([...inWorker.stepNames.eval, ...inWorker.stepNames.snapshot, 'dispose'])];
    const stepRows = allSteps.map((step) => [step, ...variantsForSteps.map(([, prefix]) => fmt(s.summary(`${prefix}: step ${step}`).median, 3))]);
    stepRows.push(['total prepare (wall)', ...variantsForSteps.map(([, prefix]) => fmt(s.summary(`${prefix}: prepare`).median, 3))]);
    stepRows.push(['heap used after boot, MiB', ...variantsForSteps.map(([, prefix]) => fmt(s.summary(`${prefix}: heap used MiB`).median, 2))]);
    out.push(table(['step', ...variantsForSteps.map(([label]) => label)], stepRows));
    out.push('');
    const med = (name: string): number => s.summary(name).median;
    out.push(`   ratios: cold/warm call ${ratio(med('cold: call'), med('warm: call'))}, first-call/warm ${ratio(med('cold, empty code cache: call'), med('warm: call'))}, `
      + `prepare eval/snapshot wall ${ratio(med('warm: prepare'), med('snapshot: prepare'))} cpu ${ratio(med('warm: prepare cpu'), med('snapshot: prepare cpu'))}, `
      + `call snapshot/warm ${ratio(med('snapshot: call'), med('warm: call'))}`);
    if (inWorker.warmedSnapshotError !== undefined) out.push(`   (the warmed-up snapshot could not be created: ${inWorker.warmedSnapshotError})`);
    out.push('');

    out.push('   V8 code cache: a fresh isolate compiling a script (ms)');
    out.push(table(
      ['script', 'KiB', 'compile miss', 'compile hit', 'miss/hit', 'compile+run miss', 'compile+run hit', 'miss/hit', 'rejected', 'ok in snapshot isolate'],
      codeCacheRows.map((entry) => [
        entry.script, fmt(entry.kib, 1), fmt(entry.compileMiss.median, 3), fmt(entry.compileHit.median, 3), ratio(entry.compileMiss.median, entry.compileHit.median),
        fmt(entry.compileRunMiss.median, 3), fmt(entry.compileRunHit.median, 3), ratio(entry.compileRunMiss.median, entry.compileRunHit.median),
        String(entry.rejected), entry.acceptedInSnapshotIsolate === undefined ? '-' : entry.acceptedInSnapshotIsolate ? 'yes' : 'no',
      ]),
    ));
    out.push('');

  }
  if (parts.e2e !== undefined) {
    const { cells, ipc, pacedIpc, pacedHop, pacedGapMs } = parts.e2e;
    out.push(`2-3. End to end: sandbox.runTool through the worker pool vs \`deno ${DENO_RUN_FLAGS.join(' ')}\` per call (latency ms; throughput calls/s)`);
    const e2eRows: string[][] = [];
    for (const tool of ['echo', 'compute', 'fetch'] as const) {
      for (const concurrency of [...CONCURRENCY, 'paced'] as const) {
        const paddock = cells.find((cell) => cell.tool === tool && cell.runner === 'paddock' && cell.concurrency === concurrency);
        const deno = cells.find((cell) => cell.tool === tool && cell.runner === 'deno' && cell.concurrency === concurrency);
        if (paddock === undefined) continue;
        e2eRows.push([
          tool, concurrency === 'paced' ? `1 paced (${fmt(pacedGapMs, 0)} ms gaps)` : String(concurrency),
          fmt(paddock.latency.median, 3), fmt(paddock.latency.p90, 3), fmt(paddock.latency.p99, 3), fmt(paddock.isolateCpu?.median ?? Number.NaN, 3), fmt(paddock.throughput, 0),
          deno === undefined ? '' : fmt(deno.latency.median, 1), deno === undefined ? '' : fmt(deno.latency.p90, 1), deno === undefined ? '' : fmt(deno.throughput, 0),
          deno === undefined ? '' : ratio(paddock.latency.median, deno.latency.median), deno === undefined ? '' : ratio(paddock.throughput, deno.throughput),
          `${paddock.calls}/${deno?.calls ?? '-'}`,
        ]);
      }
    }
    out.push(table(['tool', 'concurrency', 'paddock p50', 'p90', 'p99', 'isolate cpu', 'calls/s', 'deno p50', 'p90', 'calls/s', 'latency P/D', 'throughput P/D', 'calls P/D'], e2eRows));
    out.push('');
    out.push('   where a trivial (echo) call\'s time goes (ms, from outcome.timings: p50 / mean per phase; cold = share of calls without a warm isolate)');
    const phaseCells = (['paced', 1, 8] as const).flatMap((concurrency) => {
      const cell = cells.find((entry) => entry.tool === 'echo' && entry.runner === 'paddock' && entry.concurrency === concurrency);
      return cell?.phases === null || cell === undefined ? [] : [{ label: concurrency === 'paced' ? 'paced' : `c${concurrency}`, cell, phases: cell.phases }];
    });
    if (phaseCells.length === 0) {
      out.push('   (the sandbox reported no timings)');
    } else {
      const phaseRows: string[][] = PHASES.map((phase) => [phase, ...phaseCells.flatMap(({ phases }) => {
        const summary = phases[phase];
        if (summary === undefined) return ['-', '-'];
        return phase === 'cold' ? ['', `${fmt(summary.mean * 100, 0)}%`] : [fmt(summary.median, 3), fmt(summary.mean, 3)];
      })]);
      phaseRows.push(['total (runTool)', ...phaseCells.flatMap(({ cell }) => [fmt(cell.latency.median, 3), fmt(cell.latency.mean, 3)])]);
      out.push(table(['phase', ...phaseCells.flatMap(({ label }) => [`${label} p50`, `${label} mean`])], phaseRows));
      out.push(`   IPC round trip alone (echo child, same channel settings): p50 ${fmt(ipc.median, 3)} ms, p90 ${fmt(ipc.p90, 3)} ms back to back;`
        + ` ${fmt(pacedIpc.median, 3)} / ${fmt(pacedIpc.p90, 3)} ms after ${fmt(pacedGapMs, 0)} ms idle`);
      out.push(`   one isolate-thread round trip (context.eval('0')) after ${fmt(pacedGapMs, 0)} ms idle: p50 ${fmt(pacedHop.median, 3)} ms, p90 ${fmt(pacedHop.p90, 3)} ms`
        + ` (a paced call makes one of each before any work: ${fmt(pacedIpc.median + pacedHop.median, 2)} ms)`);
    }
    out.push('');
  }
  if (parts.inFlight !== undefined) out.push(...inFlightReport(parts.inFlight), '');
  if (parts.crash !== undefined) out.push(...crashReport(parts.crash), '');
  if (parts.isolate !== undefined) {
    const { verdict, codeCacheRows } = parts.isolate;
    out.push('Verdict');
    for (const line of verdict.text) out.push(`  ${line}`);
    const compileRow = codeCacheRows.find((entry) => entry.script === 'guest runtime');
    if (compileRow !== undefined) {
      out.push(`  code cache: the runtime compiles ${ratio(compileRow.compileMiss.median, compileRow.compileHit.median)} faster with its cache; a tool bundle's cache saves `
        + `${fmt((codeCacheRows.find((entry) => entry.script === 'compute tool')?.compileMiss.median ?? Number.NaN) - (codeCacheRows.find((entry) => entry.script === 'compute tool')?.compileHit.median ?? Number.NaN), 3)} ms (small) to `
        + `${fmt((codeCacheRows.find((entry) => entry.script === 'large tool')?.compileMiss.median ?? Number.NaN) - (codeCacheRows.find((entry) => entry.script === 'large tool')?.compileHit.median ?? Number.NaN), 3)} ms (large) per call`);
    }
  }
  out.push(`  (total ${fmt(elapsedS, 0)} s; load at end ${machine.loadAverageEnd.map((value) => value.toFixed(2)).join(' ')})`);
  return out.join('\n');
}

function inFlightReport(result: InFlightResult): string[] {
  const failures = Object.entries(result.failed).map(([kind, count]) => `${count} ${kind}`).join(', ');
  const rss = (value: RssMiB): string[] => [fmt(value.total, 0), fmt(value.coordinator, 0), fmt(value.workers, 0), String(value.workerCount)];
  return [
    `4. ${result.calls} calls in flight at once, each awaiting a slow granted fetch (${result.workers} workers, default bounds: callsPerWorker ${result.callsPerWorker} busy, `
      + `maxCallsPerWorker ${result.maxCallsPerWorker} in all; the sandbox alone, without the service's admission control; RSS MiB from /proc, sampled every 20 ms)`,
    table(['', 'total', 'coordinator', 'workers', 'worker processes'], [
      ['before the calls', ...rss(result.baseline)],
      ['peak of the sum', ...rss(result.peak)],
    ]),
    `   peak ${fmt(result.peak.total, 0)} MiB (${fmt(result.peak.total / 1024, 2)} GiB; target < 1.5 GiB) = ${fmt((result.peak.total - result.baseline.total) / result.calls, 2)} MiB per call in flight over the baseline; `
      + `sum of each process's high-water mark ${fmt(result.sumOfHighWaterMiB, 0)} MiB; PSS sum with all in flight ${fmt(result.plateauPssMiB, 0)} MiB (shared pages split)`,
    `   ${result.heldAtOnce}/${result.calls} held by the server at once after ${fmt(result.rampMs, 0)} ms; all done ${fmt(result.drainMs, 0)} ms after release; `
      + `${result.ok} ok${failures === '' ? '' : `, failed: ${failures}`}`,
  ];
}

function crashReport(result: CrashResult): string[] {
  const row = (label: string, summary: Summary): string[] => [label, fmt(summary.median, 0), fmt(summary.p90, 0), fmt(summary.min, 0), fmt(summary.max, 0), String(summary.n)];
  return [
    `5. A worker crash (SIGKILL) until its replacement serves a call again (1 worker, ${result.kills} kills; ms)`,
    table(['from the kill until', 'p50', 'p90', 'min', 'max', 'n'], [
      row('the supervisor saw the exit', result.exitSeenMs),
      row('the replacement was spawned', result.spawnedMs),
      row('a call succeeded on it', result.servingMs),
    ]),
    `   ${result.crashedCalls} call(s) failed as crashed on the way (sent to the dead worker before its exit was seen)`,
  ];
}

// ---------------------------------------------------------------------------------------------
// Main

async function denoVersion(env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(DENO, ['--version'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    child.once('error', () => { resolve('deno: not found'); });
    child.once('close', () => { resolve(stdout.split('\n')[0]?.trim() ?? 'deno: unknown'); });
  });
}

export async function runBenchmark(options: BenchOptions, log: (text: string) => void = (text) => { process.stderr.write(`${text}\n`); }): Promise<{ report: string; results: unknown }> {
  const benchStarted = performance.now();
  const folder = await mkdtemp(path.join(tmpdir(), 'paddock-bench-'));
  const server = createServer((_request, response) => { response.end(FETCH_BODY); });
  let sandbox: Sandbox | undefined;
  try {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const denoEnv: NodeJS.ProcessEnv = { ...process.env, DENO_DIR: path.join(folder, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
    const ivmPackage = JSON.parse(await readFile(path.join(ROOT, 'node_modules', 'isolated-vm', 'package.json'), 'utf8')) as { version: string };
    const machine: Machine = {
      cores: availableParallelism(),
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown CPU',
      node: process.version,
      v8: process.versions.v8,
      deno: await denoVersion(denoEnv),
      isolatedVm: ivmPackage.version,
      platform: `${process.platform}-${process.arch}`,
      loadAverageStart: loadavg(),
      loadAverageEnd: [],
    };

    const toolsFolder = path.join(folder, 'tools');
    await mkdir(toolsFolder);
    const sources = { echo: ECHO_SOURCE, compute: COMPUTE_SOURCE, fetch: FETCH_SOURCE, large: largeSource(options.quick ? 50 : 400) };
    for (const [name, source] of Object.entries(sources)) await writeFile(path.join(toolsFolder, `${name}.ts`), source);
    const url = `http://127.0.0.1:${port}/ping`;
    const makeTool = async (id: ToolUnderTest['id'], params: unknown, declared: PermissionSet, policy: PermissionSet, allow: string[]): Promise<ToolUnderTest> => {
      const file = path.join(toolsFolder, `${id}.ts`);
      const harness = path.join(folder, `deno-${id}.js`);
      await writeFile(harness, denoHarness(pathToFileURL(file).href, params));
      return {
        id, params,
        bundle: await bundleToolModule(file, toolsFolder),
        grant: resolveGrant(declared, policy, undefined, { cwd: ROOT }) as unknown as WireGrant,
        expected: id === 'echo' ? ECHO_EXPECTED : id === 'compute' ? COMPUTE_EXPECTED : FETCH_BODY,
        denoArgs: [...DENO_RUN_FLAGS, ...allow, harness],
      };
    };
    const echo = await makeTool('echo', { name: 'bench' }, {}, {}, []);
    const compute = await makeTool('compute', { n: COMPUTE_N }, {}, {}, []);
    const fetchTool = await makeTool('fetch', { url }, { net: ['127.0.0.1'] }, { net: [`127.0.0.1:${port}`] }, [`--allow-net=127.0.0.1:${port}`]);
    const large = await bundleToolModule(path.join(toolsFolder, 'large.ts'), toolsFolder);

    const code = await buildGuestRuntime();
    const runtime: Runtime = { code, hash: createHash('sha256').update(code).digest('hex') };
    const parts: ReportParts = {};

    // Memory and crash sections first: this process is the coordinator there, and the in-process
    // isolates of section 1 would inflate its RSS.
    if (options.sections.has('inflight')) {
      log(`benchmark: ${options.inFlight} calls in flight`);
      const makeSlowFetch = (slowPort: number): ToolUnderTest => ({
        ...fetchTool, params: { url: `http://127.0.0.1:${slowPort}/slow` }, expected: SLOW_BODY,
        grant: resolveGrant({ net: ['127.0.0.1'] }, { net: [`127.0.0.1:${slowPort}`] }, undefined, { cwd: ROOT }) as unknown as WireGrant,
      });
      parts.inFlight = await benchInFlight(options.inFlight, options, makeSlowFetch, log);
    }
    if (options.sections.has('crash')) {
      log(`benchmark: crash recovery (${options.crashes} kills)`);
      parts.crash = await benchCrashRecovery(options.crashes, compute, options, log);
    }

    let pacedGapMs = DEFAULT_PACED_GAP_MS;
    if (options.sections.has('isolate')) {
      log(`benchmark: in-worker isolate phases (${options.iterations} iterations)`);
      const inWorker = await benchInWorker(runtime, compute, options, log);
      log('benchmark: code cache');
      const snapshot = ivm.Isolate.createSnapshot([{ code: runtime.code, filename: 'paddock:runtime' }]);
      const codeCacheRows = await benchCodeCache([
        { name: 'guest runtime', code: runtime.code },
        { name: 'compute tool', code: compute.bundle.code },
        { name: 'large tool', code: large.code },
      ], () => snapshot, Math.max(3, Math.ceil(options.iterations / 3)));
      snapshot.release();
      parts.isolate = { inWorker, codeCacheRows, verdict: verdictOf(inWorker, machine.cores) };
      const prepareMs = inWorker.samples.summary('warm: prepare').median;
      if (Number.isFinite(prepareMs)) pacedGapMs = Math.max(10, Math.ceil(3 * prepareMs));
    }

    if (options.sections.has('e2e')) {
      log(`benchmark: end to end (${options.workers} workers)`);
      const audit: AuditRecord[] = [];
      sandbox = await startSandbox({
        limits: DEFAULT_LIMITS,
        audit: { record: (record) => { if (!record.allowed) audit.push(record); } },
        workers: options.workers,
        warmIsolates: options.warmIsolates,
      });
      log('benchmark: IPC round trip');
      const ipcCall = isolateCall(runtime, compute, 'ipc');
      ipcCall.revoke();
      const ipc = await benchIpc(ipcCall.request, options.iterations);
      const pacedSamples = Math.max(20, Math.ceil(options.iterations / 4));
      const pacedIpc = await benchIpc(ipcCall.request, pacedSamples, pacedGapMs);
      const pacedHop = await benchIsolateHop(pacedSamples, pacedGapMs);
      const cells = await benchEndToEnd(sandbox, [echo, compute, fetchTool], options, denoEnv, pacedGapMs, log);
      if (audit.length > 0) throw new Error(`unexpected denials: ${JSON.stringify(audit.slice(0, 3))}`);
      parts.e2e = { cells, ipc, pacedIpc, pacedHop, pacedGapMs };
    }
    machine.loadAverageEnd = loadavg();

    const elapsedS = (performance.now() - benchStarted) / 1000;
    const report = printReport(machine, options, parts, elapsedS);
    const inWorkerJson: Record<string, Summary> = {};
    if (parts.isolate !== undefined) for (const name of inWorkerNames(parts.isolate.inWorker)) inWorkerJson[name] = parts.isolate.inWorker.samples.summary(name);
    const results = {
      machine,
      options: {
        iterations: options.iterations, rounds: options.rounds, denoCalls: options.denoCalls, workers: options.workers, warmIsolates: options.warmIsolates,
        inFlight: options.inFlight, crashes: options.crashes, sections: [...options.sections], quick: options.quick,
      },
      unit: { latency: 'ms', throughput: 'calls/s', memory: 'MiB' },
      inWorker: parts.isolate === undefined ? null : {
        phases: inWorkerJson, steps: parts.isolate.inWorker.stepNames, snapshotBytes: parts.isolate.inWorker.snapshotBytes, warmedSnapshotError: parts.isolate.inWorker.warmedSnapshotError ?? null,
      },
      codeCache: parts.isolate?.codeCacheRows ?? null,
      endToEnd: parts.e2e?.cells.map((cell) => ({ ...cell, throughput: Number.isFinite(cell.throughput) ? cell.throughput : null })) ?? null,
      pacedGapMs,
      ipcRoundTrip: parts.e2e?.ipc ?? null,
      pacedIpcRoundTrip: parts.e2e?.pacedIpc ?? null,
      pacedIsolateHop: parts.e2e?.pacedHop ?? null,
      inFlight: parts.inFlight ?? null,
      crashRecovery: parts.crash ?? null,
      verdict: parts.isolate?.verdict ?? null,
      elapsedS,
    };
    return { report, results };
  } finally {
    await sandbox?.close();
    server.close();
    server.closeAllConnections();
    await rm(folder, { recursive: true, force: true });
  }
}

function inWorkerNames(inWorker: InWorkerResult): string[] {
  const names = ['cold: call', 'cold: call cpu', 'cold, empty code cache: call', 'cold, empty code cache: call cpu', 'createSnapshot', 'createSnapshot (warm-up)'];
  for (const prefix of ['pool: eval, refill at take', 'pool: eval, refill after call', 'pool: snapshot, refill at take']) names.push(`${prefix}: call`, `${prefix}: call cpu`);
  for (const prefix of ['warm', 'snapshot', 'snapshot, warmed']) names.push(`${prefix}: prepare`, `${prefix}: prepare cpu`, `${prefix}: call`, `${prefix}: call cpu`);
  const stepPrefixes: [string, keyof InWorkerResult['stepNames']][] = [['steps: eval', 'eval'], ['steps: snapshot', 'snapshot'], ['steps: snapshot, warmed', 'snapshotWarmed']];
  for (const [prefix, key] of stepPrefixes) {
    names.push(`${prefix}: prepare`, `${prefix}: prepare cpu`, `${prefix}: heap used MiB`, `${prefix}: step dispose`);
    for (const step of inWorker.stepNames[key]) names.push(`${prefix}: step ${step}`);
  }
  return names.filter((name) => inWorker.samples.has(name));
}

if (import.meta.main) {
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    process.exit(2);
  }
  runBenchmark(options).then(async ({ report, results }) => {
    process.stdout.write(`${report}\n`);
    if (options.json !== undefined) {
      await writeFile(options.json, `${JSON.stringify(results, null, 2)}\n`);
      process.stdout.write(`results written to ${options.json}\n`);
    }
  }).catch((error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
