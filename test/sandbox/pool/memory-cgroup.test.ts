/**
 * Pins: where the service may write a memory cgroup, each sandbox worker runs in its own, limited
 * to the worker's ceiling, and the kernel (not the 250 ms RSS watch) stops a worker that grows past
 * it: only that worker's calls fail, with a message naming the ceiling, and its cgroup is removed.
 * Workers also volunteer to the kernel's OOM killer (oom_score_adj 1000) before anything else.
 * Runs against the real kernel; skipped where this process has no writable memory cgroup.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_LIMITS, resolveLimits } from '../../../sandbox/limits.ts';
import { openMemoryCgroups } from '../../../sandbox/pool/memory-cgroup.ts';
import { WorkerPool } from '../../../sandbox/pool/worker-pool.ts';
import type { PoolEvent } from '../../../sandbox/pool/worker-pool.ts';
import type { CallRequest } from '../../../sandbox/worker/messages.ts';
import { FAKE_RUNTIME, fakeBundle } from '../host/fake-runtime.ts';

const auto = openMemoryCgroups('auto');
const haveCgroups = auto.ok;

const request = (body: string, limits = {}): CallRequest => ({
  identity: { callId: 'c', tool: 't', caller: 'test' },
  bundle: fakeBundle(body),
  input: { kind: 'tool', params: {}, callId: 'c', sessionId: null },
  grant: { net: [], read: [], write: [], env: [] },
  limits: resolveLimits(DEFAULT_LIMITS, { wallTimeMs: 10_000, cpuTimeMs: 10_000, ...limits }),
  cwd: '/',
  secrets: {},
});

/** The memory cgroup path of a process (cgroup v1 line `N:memory:/path`, or v2 `0::/path`). */
function memoryCgroupOf(pid: number): string | undefined {
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
  const v1 = lines.find((line) => line.split(':')[1]?.split(',').includes('memory'));
  return (v1 ?? lines.find((line) => line.startsWith('0::')))?.split(':')[2];
}

describe('openMemoryCgroups', () => {
  it('says why there is no cgroup when it is turned off or misconfigured', async () => {
    expect(openMemoryCgroups('off')).toEqual({ ok: false, reason: 'turned off by sandbox.memoryCgroup' });
    expect(openMemoryCgroups('cgroups/paddock')).toEqual({ ok: false, reason: 'sandbox.memoryCgroup must be an absolute path, got "cgroups/paddock"' });
    const plain = await mkdtemp(path.join(tmpdir(), 'paddock-not-a-cgroup-'));
    try {
      expect(openMemoryCgroups(plain)).toEqual({ ok: false, reason: `${plain} is not a memory cgroup` });
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });

  // A cgroup v2 hierarchy mounted beside v1, which owns the memory controller (as on this project's CI machine).
  const unified = '/sys/fs/cgroup/unified';
  const v2WithoutMemory = existsSync(path.join(unified, 'cgroup.controllers')) && !readFileSync(path.join(unified, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory');
  it.skipIf(!v2WithoutMemory)('says when a cgroup v2 directory cannot limit memory', () => {
    expect(openMemoryCgroups(unified)).toEqual({ ok: false, reason: `${unified}: the memory controller is not available there` });
  });

  it.skipIf(!haveCgroups)('moves a process into its own cgroup with the limit, and removes the cgroup once the process is gone', async () => {
    if (!auto.ok) return;
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = child.pid!;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const cgroup = auto.cgroups.place(pid, 200);
    try {
      expect(cgroup.path).toBe(path.join(auto.cgroups.base, `paddock-worker-${pid}`));
      expect(memoryCgroupOf(pid)?.endsWith(`/paddock-worker-${pid}`)).toBe(true);
      const limitFile = auto.cgroups.version === 1 ? 'memory.limit_in_bytes' : 'memory.max';
      expect(readFileSync(path.join(cgroup.path, limitFile), 'utf8').trim()).toBe(String(200 * 1_048_576));
      expect(cgroup.oomKills()).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    await cgroup.remove();
    await vi.waitFor(() => { expect(existsSync(cgroup.path)).toBe(false); });
  });
});

describe.skipIf(!haveCgroups)('WorkerPool with memory cgroups', () => {
  it('has the kernel stop a worker at its ceiling between RSS checks; only its calls fail, and the pool serves on', async () => {
    const events: PoolEvent[] = [];
    const pool = new WorkerPool({
      runtime: FAKE_RUNTIME, size: 1, callsPerWorker: 8, rssLimitMiB: 256, audit: { record: () => undefined },
      warm: { heapMiB: 64, count: 0 }, onEvent: (event) => events.push(event),
    });
    try {
      await pool.ready();
      expect(events[0]).toMatchObject({ type: 'memory-ceiling', enforcedBy: `cgroup-v${auto.ok ? auto.cgroups.version : 0}`, limitMiB: 256 });
      const [first] = pool.pids();
      expect(readFileSync(`/proc/${first}/oom_score_adj`, 'utf8').trim()).toBe('1000');
      expect(memoryCgroupOf(first!)?.endsWith(`/paddock-worker-${first}`)).toBe(true);
      // Eight calls of ~48 MiB each, every one within its own 64 MiB heap limit: together past 256 MiB,
      // faster than the supervisor's 250 ms RSS check can see.
      const hog = 'const keep = []; for (let i = 0; i < 6; i++) keep.push(new Array(1_000_000).fill(i + 0.5)); await host("sleep", { ms: 5000 }); return String(keep.length);';
      const replies = await Promise.all(Array.from({ length: 8 }, () => pool.run({ request: request(hog) })));
      for (const reply of replies) {
        expect(reply).toMatchObject({ ok: false, error: { kind: 'crashed', message: expect.stringContaining('the worker\'s memory reached its ceiling of 256 MiB and the kernel stopped it') } });
      }
      expect(events).toContainEqual(expect.objectContaining({ type: 'worker-exited', pid: first, signal: 'SIGKILL', overMemoryCeiling: true }));
      await vi.waitFor(() => { expect(existsSync(path.join(auto.ok ? auto.cgroups.base : '', `paddock-worker-${first}`))).toBe(false); });
      await pool.ready();
      expect(pool.pids()).not.toContain(first);
      expect(await pool.run({ request: request('return "after";') })).toMatchObject({ ok: true, value: { content: 'after' } });
    } finally {
      await pool.close();
    }
  });
});
