/**
 * Pins: every call runs in a fresh isolate and every way a call can end (value, thrown error, CPU
 * or wall time, heap, output, abort) ends only that call, with its own error kind.
 */
import { describe, expect, it, vi } from 'vitest';
import { WarmIsolates, prepareIsolate } from '../../../sandbox/host/prepared-isolate.ts';
import { DEFAULT_LIMITS, resolveLimits } from '../../../sandbox/limits.ts';
import { runInIsolate } from '../../../sandbox/host/run-in-isolate.ts';
import type { IsolateCall } from '../../../sandbox/host/run-in-isolate.ts';
import { FAKE_RUNTIME, fakeBundle } from './fake-runtime.ts';

const run = (body: string, overrides: Partial<IsolateCall> = {}, limits = {}) => runInIsolate({
  runtime: FAKE_RUNTIME,
  bundle: fakeBundle(body),
  input: { kind: 'tool', params: { n: 2 }, callId: 'c1', sessionId: null },
  limits: resolveLimits(DEFAULT_LIMITS, { wallTimeMs: 3000, cpuTimeMs: 2000, ...limits }),
  handlers: { async: {}, sync: {} },
  ...overrides,
});

describe('runInIsolate', () => {
  it('returns the tool result', async () => {
    const outcome = await run('return String(params.n * 21);');
    expect(outcome).toMatchObject({ ok: true, value: { content: '42', isError: false } });
  });

  it('keeps no state between calls', async () => {
    await run('globalThis.leak = "secret"; return "set";');
    const outcome = await run('return String(globalThis.leak);');
    expect(outcome).toMatchObject({ ok: true, value: { content: 'undefined' } });
  });

  it('turns a thrown error into tool_error with its name and message', async () => {
    const outcome = await run('throw new RangeError("bad n");');
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect([outcome.error.kind, outcome.error.message, outcome.error.details['name']]).toEqual(['tool_error', 'bad n', 'RangeError']);
  });

  it('ends a busy loop at the CPU limit', async () => {
    const started = Date.now();
    const outcome = await run('for (;;) {}', {}, { cpuTimeMs: 150 });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error).toMatchObject({ kind: 'timeout', details: { clock: 'cpu' } });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('ends a call waiting forever at the wall limit', async () => {
    const outcome = await run('await new Promise(() => {});', {}, { wallTimeMs: 200 });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error).toMatchObject({ kind: 'timeout', details: { clock: 'wall' } });
  });

  it('ends a heap bomb with memory_limit', async () => {
    const outcome = await run('const a = []; for (;;) a.push(new Array(100000).fill(Math.random()));', {}, { heapMiB: 16, cpuTimeMs: 10_000, wallTimeMs: 10_000 });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.kind).toBe('memory_limit');
  });

  it('counts logs against the output limit', async () => {
    const outcome = await run('for (let i = 0; i < 1000; i++) hostSync("log", { level: "info", text: "x".repeat(100) }); return "done";', {}, { maxOutputBytes: 10_000 });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.kind).toBe('output_limit');
  });

  it('counts the result against the output limit', async () => {
    const outcome = await run('return "y".repeat(20000);', {}, { maxOutputBytes: 10_000 });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.kind).toBe('output_limit');
  });

  it('runs host timers and streams updates', async () => {
    const updates: string[] = [];
    const outcome = await run('await host("sleep", { ms: 20 }); await host("update", { text: "half" }); return "ok";', { onUpdate: (text) => updates.push(text) });
    expect(outcome).toMatchObject({ ok: true, value: { content: 'ok' } });
    expect(updates).toEqual(['half']);
  });

  it('aborts within 100 ms', async () => {
    const controller = new AbortController();
    const pending = run('for (;;) {}', { signal: controller.signal }, { cpuTimeMs: 10_000, wallTimeMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const abortedAt = performance.now();
    controller.abort();
    const outcome = await pending;
    expect(performance.now() - abortedAt).toBeLessThan(100);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.kind).toBe('aborted');
  });

  it('refuses unknown host operations without exposing the host', async () => {
    const outcome = await run('try { hostSync("spawn", {}); } catch (e) { return e.message; } return "no";');
    expect(outcome).toMatchObject({ ok: true, value: { content: 'Unknown host operation "spawn".' } });
  });
});

describe('runInIsolate with a prepared (warm) isolate', () => {
  it('runs the call and refuses a second one on the same isolate', async () => {
    const limits = resolveLimits(DEFAULT_LIMITS, {});
    const prepared = await prepareIsolate(FAKE_RUNTIME, limits.heapMiB);
    const call: IsolateCall = {
      runtime: FAKE_RUNTIME, bundle: fakeBundle('return "warm";'), input: { kind: 'tool', params: {}, callId: 'w', sessionId: null },
      limits, handlers: { async: {}, sync: {} },
    };
    expect(await runInIsolate(call, prepared)).toMatchObject({ ok: true, value: { content: 'warm' } });
    expect(prepared.isolate.isDisposed).toBe(true);
    expect(() => { prepared.attach({ request: () => 0, call: () => ({ ok: true, value: null }), cancel: () => undefined }); }).toThrow(/exactly one call/);
  });

  it('hands out each warm isolate once and refills', async () => {
    const warm = new WarmIsolates(FAKE_RUNTIME, 64, 2);
    try {
      await vi.waitFor(() => { expect(warm.take(64, FAKE_RUNTIME.hash)).toBeDefined(); });
      expect(warm.take(32, FAKE_RUNTIME.hash)).toBeUndefined();
      expect(warm.take(64, 'another-runtime')).toBeUndefined();
      const seen = new Set<unknown>();
      await vi.waitFor(() => {
        const prepared = warm.take(64, FAKE_RUNTIME.hash);
        if (prepared !== undefined) seen.add(prepared);
        expect(seen.size).toBe(2);
      });
    } finally {
      warm.close();
    }
  });
});
