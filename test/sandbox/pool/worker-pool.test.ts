/**
 * Pins: isolates run in supervised worker processes. A worker that dies costs only the calls it was
 * running (kind `crashed`, not retried); a worker that stops answering past a call's wall limit is
 * killed (that call: `timeout`); the pool replaces workers and keeps answering.
 */
import { spawn } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_LIMITS, resolveLimits } from '../../../sandbox/limits.ts';
import { WorkerPool } from '../../../sandbox/pool/worker-pool.ts';
import type { PoolEvent } from '../../../sandbox/pool/worker-pool.ts';
import type { CallRequest } from '../../../sandbox/worker/messages.ts';
import { FAKE_RUNTIME, fakeBundle } from '../host/fake-runtime.ts';

const events: PoolEvent[] = [];
let pool: WorkerPool;

const request = (body: string, limits = {}): CallRequest => ({
  identity: { callId: 'c', tool: 't', caller: 'test' },
  bundle: fakeBundle(body),
  input: { kind: 'tool', params: {}, callId: 'c', sessionId: null },
  grant: { net: [], read: [], write: [], env: [] },
  limits: resolveLimits(DEFAULT_LIMITS, { wallTimeMs: 5000, ...limits }),
  cwd: '/',
  secrets: {},
});

beforeAll(async () => {
  pool = new WorkerPool({ runtime: FAKE_RUNTIME, size: 2, callsPerWorker: 2, killGraceMs: 300, audit: { record: () => undefined }, onEvent: (event) => events.push(event) });
  await pool.ready();
});
afterAll(async () => { await pool.close(); });

describe('WorkerPool', () => {
  it('runs calls in worker processes, not in this one', async () => {
    const reply = await pool.run({ request: request('return String(typeof process);') });
    expect(reply).toMatchObject({ ok: true, value: { content: 'undefined' } });
    expect(pool.pids()).toHaveLength(2);
    expect(pool.pids()).not.toContain(process.pid);
  });

  it('reports where the call\'s time went, on both sides of the channel', async () => {
    const reply = await pool.run({ request: request('return "timed";') });
    expect(reply).toMatchObject({ ok: true, value: { content: 'timed' } });
    const { timings } = reply;
    expect(timings).toBeDefined();
    for (const phase of ['queued', 'toWorker', 'bind', 'isolate', 'compile', 'run', 'invoke', 'finish', 'rest', 'fromWorker'] as const) {
      expect(timings?.[phase], phase).toBeGreaterThanOrEqual(0);
      expect(timings?.[phase], phase).toBeLessThan(5000);
    }
    expect(typeof timings?.cold).toBe('boolean');
  });

  it('relays updates and logs while the call runs', async () => {
    const updates: string[] = [];
    const logs: string[] = [];
    const reply = await pool.run({
      request: request('await host("update", { text: "step 1" }); hostSync("log", { level: "info", text: "hello" }); return "done";'),
      onUpdate: (text) => updates.push(text),
      onLog: (_level, text) => logs.push(text),
    });
    expect(reply).toMatchObject({ ok: true, value: { content: 'done' } });
    expect(updates).toEqual(['step 1']);
    expect(logs).toEqual(['hello']);
  });

  it('fails only the calls of a worker that dies, then replaces it', async () => {
    const [victim, survivor] = pool.pids();
    // Two slow calls per worker: the pool spreads them, two land on the victim.
    const calls = Array.from({ length: 4 }, () => pool.run({ request: request('await host("sleep", { ms: 400 }); return "slept";') }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.kill(victim!, 'SIGKILL');
    const replies = await Promise.all(calls);
    const crashed = replies.filter((reply) => !reply.ok && reply.error.kind === 'crashed');
    const fine = replies.filter((reply) => reply.ok);
    expect(crashed).toHaveLength(2);
    expect(fine).toHaveLength(2);
    expect(crashed[0]).toMatchObject({ error: { message: expect.stringContaining('killed by SIGKILL') } });
    await pool.ready();
    expect(pool.pids()).toContain(survivor);
    expect(pool.pids()).not.toContain(victim);
    const after = await pool.run({ request: request('return "still here";') });
    expect(after).toMatchObject({ ok: true, value: { content: 'still here' } });
  });

  it('kills a worker that stops answering past the wall limit', async () => {
    const call = pool.run({ request: request('await host("sleep", { ms: 5000 }); return "late";', { wallTimeMs: 300 }) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // SIGSTOP freezes the whole worker, as native code stuck outside V8's reach would.
    for (const pid of pool.pids()) process.kill(pid, 'SIGSTOP');
    const reply = await call;
    expect(reply).toMatchObject({ ok: false, error: { kind: 'timeout', message: expect.stringContaining('worker was killed') } });
    for (const pid of pool.pids()) {
      try { process.kill(pid, 'SIGCONT'); } catch { /* already replaced */ }
    }
    expect(events.some((event) => event.type === 'worker-killed')).toBe(true);
  });

  it('aborts a running call', async () => {
    const controller = new AbortController();
    const call = pool.run({ request: request('for (;;) {}', { cpuTimeMs: 10_000 }), signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    controller.abort();
    const reply = await call;
    expect(reply, JSON.stringify(reply)).toMatchObject({ ok: false, error: { kind: "aborted" } });
    expect(performance.now() - started).toBeLessThan(100);
  });
});

describe('WorkerPool bundle cache', () => {
  // Each request below names bundle A by its hash; when A's code does not travel, the worker runs
  // the copy it holds, so a request carrying other code under A's hash shows which copy ran.
  const named = (bundle: CallRequest['bundle'], code: string): CallRequest => ({ ...request(''), bundle: { ...bundle, code } });

  it('sends a bundle\'s code to a worker once, and again after the worker dropped it', async () => {
    const small = new WorkerPool({ runtime: FAKE_RUNTIME, size: 1, audit: { record: () => undefined }, warm: { heapMiB: 64, count: 0 }, bundleCache: { maxBundles: 1, maxBytes: 1_000_000 } });
    try {
      await small.ready();
      const a = fakeBundle('return "A";');
      const imposter = fakeBundle('return "not A";').code;
      expect(await small.run({ request: named(a, a.code) })).toMatchObject({ ok: true, value: { content: 'A' } });
      expect(await small.run({ request: named(a, imposter) })).toMatchObject({ ok: true, value: { content: 'A' } });
      // B pushes A out (one bundle held): A's code travels again.
      expect(await small.run({ request: request('return "B";') })).toMatchObject({ ok: true, value: { content: 'B' } });
      expect(await small.run({ request: named(a, imposter) })).toMatchObject({ ok: true, value: { content: 'not A' } });
    } finally {
      await small.close();
    }
  });

  it('sends the code again when a worker says it lacks a bundle it should hold', async () => {
    const small = new WorkerPool({ runtime: FAKE_RUNTIME, size: 1, audit: { record: () => undefined }, workerEntry: new URL('./fixtures/forgetful-worker.ts', import.meta.url) });
    try {
      await small.ready();
      const a = fakeBundle('return "A";');
      expect(await small.run({ request: named(a, a.code) })).toMatchObject({ ok: true, value: { content: 'code after 0 request(s)' } });
      expect(await small.run({ request: named(a, a.code) })).toMatchObject({ ok: true, value: { content: 'code after 1 request(s)' } });
    } finally {
      await small.close();
    }
  });

  it('always sends an exec snippet, never holding it', async () => {
    const small = new WorkerPool({ runtime: FAKE_RUNTIME, size: 1, audit: { record: () => undefined }, warm: { heapMiB: 64, count: 0 } });
    try {
      await small.ready();
      const exec = (code: string): CallRequest => ({ ...named(fakeBundle('return 1;'), code), input: { kind: 'exec' } });
      expect(await small.run({ request: exec(fakeBundle('return 1;').code) })).toMatchObject({ ok: true, value: { result: 1 } });
      expect(await small.run({ request: exec(fakeBundle('return 2;').code) })).toMatchObject({ ok: true, value: { result: 2 } });
    } finally {
      await small.close();
    }
  });

  it('starts a replacement worker with nothing held', async () => {
    const small = new WorkerPool({ runtime: FAKE_RUNTIME, size: 1, audit: { record: () => undefined }, warm: { heapMiB: 64, count: 0 } });
    try {
      await small.ready();
      const a = fakeBundle('return "A";');
      expect(await small.run({ request: named(a, a.code) })).toMatchObject({ ok: true, value: { content: 'A' } });
      const [first] = small.pids();
      process.kill(first!, 'SIGKILL');
      await vi.waitFor(() => { expect(small.pids()[0]).not.toBe(first); });
      await small.ready();
      expect(await small.run({ request: named(a, a.code) })).toMatchObject({ ok: true, value: { content: 'A' } });
    } finally {
      await small.close();
    }
  });
});

describe('WorkerPool worker start-up', () => {
  it('gives workers nothing of the environment, and a private compile cache filled for replacements and removed at close', async () => {
    const small = new WorkerPool({ runtime: FAKE_RUNTIME, size: 1, audit: { record: () => undefined }, warm: { heapMiB: 64, count: 0 } });
    let folder: string | undefined;
    try {
      await small.ready();
      const [pid] = small.pids();
      // Node adds the IPC channel's own two variables.
      const environ = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0').filter((entry) => entry !== '' && !entry.startsWith('NODE_CHANNEL_'));
      expect(environ).toEqual([]);
      folder = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter((entry) => entry !== '').at(-1);
      expect(folder?.startsWith(path.join(tmpdir(), 'paddock-worker-compile-cache-'))).toBe(true);
      expect((await stat(folder!)).mode & 0o777).toBe(0o700);
      // The worker writes its compiled modules shortly after it is ready (it never exits on its own).
      await vi.waitFor(async () => { expect((await readdir(folder!, { recursive: true })).length).toBeGreaterThan(10); }, { timeout: 5000 });
    } finally {
      await small.close();
    }
    await expect(stat(folder!)).rejects.toThrow(/ENOENT/);
  });
});

describe('WorkerPool worker priority', () => {
  it.each([
    { steps: undefined, below: 10 },
    { steps: 4, below: 4 },
    { steps: 0, below: 0 },
  ])('runs workers, and the isolate threads they start, $below nice steps below the service (at most 19) for niceSteps $steps', async ({ steps, below }) => {
    const small = new WorkerPool({ runtime: FAKE_RUNTIME, size: 1, audit: { record: () => undefined }, warm: { heapMiB: 64, count: 1 }, ...(steps === undefined ? {} : { niceSteps: steps }) });
    try {
      await small.ready();
      expect(await small.run({ request: request('return "ran";') })).toMatchObject({ ok: true, value: { content: 'ran' } });
      const [pid] = small.pids();
      // Field 19 of /proc/<pid>/task/<tid>/stat (after the parenthesised name) is the nice value.
      const niceOf = async (file: string): Promise<{ name: string; nice: number }> => {
        const stat = await readFile(file, 'utf8');
        return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) };
      };
      const threads = await Promise.all((await readdir(`/proc/${pid}/task`)).map((tid) => niceOf(`/proc/${pid}/task/${tid}/stat`)));
      // isolated-vm's threads take the name of the thread that started them.
      const mainThreads = threads.filter((thread) => thread.name === 'MainThread');
      expect(mainThreads.length).toBeGreaterThanOrEqual(2);
      const service = (await niceOf(`/proc/${process.pid}/stat`)).nice;
      expect(mainThreads.map((thread) => thread.nice)).toEqual(mainThreads.map(() => Math.min(19, service + below)));
    } finally {
      await small.close();
    }
  });
});

describe('WorkerPool compile cache at exit', () => {
  it('is removed when the process exits without closing the pool', async () => {
    const poolModule = new URL('../../../sandbox/pool/worker-pool.ts', import.meta.url).href;
    const runtimeModule = new URL('../host/fake-runtime.ts', import.meta.url).href;
    const script = `
      import { readFileSync } from 'node:fs';
      const { WorkerPool } = await import(${JSON.stringify(poolModule)});
      const { FAKE_RUNTIME } = await import(${JSON.stringify(runtimeModule)});
      const pool = new WorkerPool({ runtime: FAKE_RUNTIME, size: 1, audit: { record: () => undefined }, warm: { heapMiB: 64, count: 0 } });
      await pool.ready();
      const args = readFileSync('/proc/' + pool.pids()[0] + '/cmdline', 'utf8').split('\\0').filter(Boolean);
      process.stdout.write(args.at(-1));
      process.exit(0);
    `;
    const folder = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--no-node-snapshot', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
      child.once('error', reject);
      child.once('close', (code) => { if (code === 0) resolve(stdout); else reject(new Error(`exit ${String(code)}`)); });
    });
    expect(folder.startsWith(path.join(tmpdir(), 'paddock-worker-compile-cache-'))).toBe(true);
    await expect(stat(folder)).rejects.toThrow(/ENOENT/);
  });
});

describe('WorkerPool runtime snapshots', () => {
  it('turns snapshots off for later workers once one died making it', async () => {
    const events: PoolEvent[] = [];
    const small = new WorkerPool({
      runtime: FAKE_RUNTIME, size: 1, audit: { record: () => undefined }, onEvent: (event) => events.push(event),
      workerEntry: new URL('./fixtures/snapshot-abort-worker.ts', import.meta.url),
    });
    try {
      await vi.waitFor(() => { expect(events.some((event) => event.type === 'snapshot-disabled')).toBe(true); }, { timeout: 10_000 });
      expect(events.find((event) => event.type === 'snapshot-disabled')).toMatchObject({ reason: expect.stringContaining('died making the runtime snapshot') });
      await vi.waitFor(async () => {
        const reply = await small.run({ request: request('') });
        expect(reply).toMatchObject({ ok: true, value: { content: 'snapshot:false' } });
      }, { timeout: 10_000 });
    } finally {
      await small.close();
    }
  });

  it('serves calls from snapshot isolates once a worker has made one', async () => {
    const small = new WorkerPool({ runtime: FAKE_RUNTIME, size: 1, audit: { record: () => undefined }, warm: { heapMiB: 64, count: 1 } });
    try {
      await small.ready();
      // The snapshot is made shortly after ready; calls before, during and after it all work.
      for (let index = 0; index < 20; index++) {
        expect(await small.run({ request: request('return String(globalThis.leak ?? "clean") + (globalThis.leak = "dirty", "");') })).toMatchObject({ ok: true, value: { content: 'clean' } });
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    } finally {
      await small.close();
    }
  });
});

describe('WorkerPool memory ceiling', () => {
  it('kills a worker whose resident memory passes the ceiling; its call fails as crashed', async () => {
    // The supervisor's RSS watch alone (no memory cgroup, which would stop the worker first: ./memory-cgroup.test.ts).
    const small = new WorkerPool({ runtime: FAKE_RUNTIME, size: 1, rssLimitMiB: 300, memoryCgroup: 'off', audit: { record: () => undefined }, warm: { heapMiB: 64, count: 0 } });
    try {
      await small.ready();
      const [first] = small.pids();
      // 600 MiB of live arrays under a 1 GiB heap limit: the isolate keeps going, the worker's RSS does not.
      const reply = await small.run({ request: request('const keep = []; for (let i = 0; i < 600; i++) { keep.push(new Float64Array(131072).fill(i)); await host("sleep", { ms: 1 }); } return String(keep.length);', { heapMiB: 1024, wallTimeMs: 20_000, cpuTimeMs: 20_000 }) });
      expect(reply).toMatchObject({ ok: false, error: { kind: 'crashed', message: expect.stringContaining('over its ceiling of 300 MiB') } });
      await small.ready();
      expect(small.pids()).not.toContain(first);
    } finally {
      await small.close();
    }
  });
});
