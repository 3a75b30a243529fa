/**
 * Hostile: a memory bomb that beats isolated-vm's heap limit (a guideline, not a wall). A single
 * flat 256 MiB string fits "inside" a 32 MiB heap limit, and pushes its worker over its memory
 * ceiling: held by the kernel where workers get a memory cgroup (sandbox/pool/memory-cgroup.ts),
 * else by the supervisor's RSS watch. It must cost exactly that worker: the call fails with
 * `crashed`, a call running on the other worker meanwhile succeeds, a replacement starts, and the
 * next call works.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure, expectNextCallWorks, expectResult, startHostile } from './harness.ts';
import type { Hostile } from './harness.ts';

const RSS_LIMIT_MIB = 256;

let h: Hostile;
beforeAll(async () => { h = await startHostile({ workers: 2, rssLimitMiB: RSS_LIMIT_MIB }); });
afterAll(async () => { await h.close(); });

describe('a bomb past the heap limit', () => {
  it('costs one worker, never the service', async () => {
    const before = h.sandbox.pool.pids();
    expect(before).toHaveLength(2);
    // 'x'.repeat() builds a rope; indexOf flattens it into one 256 MiB allocation the heap limit does not stop.
    const bomb = h.exec(`
      const flat = 'x'.repeat(2 ** 28);
      flat.indexOf('y');
      await new Promise((resolve) => setTimeout(resolve, 8000));
      return flat.length;`, { limits: { heapMiB: 32, cpuTimeMs: 5_000, wallTimeMs: 10_000 } });
    // The pool puts this one on the idle worker while the bomb runs.
    expectResult(await h.exec(`return 'served meanwhile';`), 'served meanwhile');
    const outcome = await bomb;
    const byKernel = h.events.some((event) => event.type === 'memory-ceiling' && event.enforcedBy !== 'rss-watch');
    expectFailure(outcome, {
      kind: 'crashed', name: 'SandboxCrashed',
      message: byKernel
        ? `The sandbox worker running this call stopped (the worker's memory reached its ceiling of ${RSS_LIMIT_MIB} MiB and the kernel stopped it); the call was not retried.`
        : new RegExp(`^The sandbox worker running this call stopped \\(the worker's memory reached \\d+ MiB, over its ceiling of ${RSS_LIMIT_MIB} MiB\\); the call was not retried\\.$`),
    });
    const after = h.sandbox.pool.pids();
    expect(after).toHaveLength(2);
    expect(after.filter((pid) => before.includes(pid))).toHaveLength(1);
    const [gone] = before.filter((pid) => !after.includes(pid));
    expect(h.events.filter((event) => event.type === 'worker-killed')).toEqual(byKernel ? [] : [
      { type: 'worker-killed', pid: gone, reason: expect.stringMatching(new RegExp(`over its ceiling of ${RSS_LIMIT_MIB} MiB$`)) },
    ]);
    expect(h.events.filter((event) => event.type === 'worker-exited')).toEqual([
      expect.objectContaining({ type: 'worker-exited', pid: gone, signal: 'SIGKILL', failedCalls: 1, overMemoryCeiling: byKernel }),
    ]);
    await expectNextCallWorks(h, { workerExits: 1 });
  });
});
