/**
 * Pins: every call runs in a fresh isolate and every way a call can end (value, thrown error, CPU
 * or wall time, heap, output, abort) ends only that call, with its own error kind.
 */
import { describe, expect, it, vi } from 'vitest';
import { WarmIsolates, codeCache, createRuntimeSnapshot, prepareIsolate, primeRuntimeCodeCache } from '../../../sandbox/host/prepared-isolate.ts';
import { ivm } from '../../../sandbox/host/transfer.ts';
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
  it('hands a cleanly ended call\'s isolate to deferDispose, and closes the doors at once', async () => {
    const limits = resolveLimits(DEFAULT_LIMITS, {});
    const prepared = await prepareIsolate(FAKE_RUNTIME, limits.heapMiB);
    let dispose: (() => void) | undefined;
    const logs: string[] = [];
    const outcome = await runInIsolate({
      runtime: FAKE_RUNTIME, bundle: fakeBundle('hostSync("log", { level: "info", text: "during" }); return "done";'),
      input: { kind: 'tool', params: {}, callId: 'd', sessionId: null }, limits, handlers: { async: {}, sync: {} },
      onLog: (_level, text) => logs.push(text),
      deferDispose: (later) => { dispose = later; },
    }, prepared);
    expect(outcome).toMatchObject({ ok: true, value: { content: 'done' } });
    expect(dispose).toBeDefined();
    expect(prepared.isolate.isDisposed).toBe(false);
    // Whatever still runs in the isolate until it is disposed finds the doors shut.
    const late = String(await prepared.context.eval('try { hostSync("log", { level: "info", text: "late" }); "accepted"; } catch (e) { e.message; }'));
    const lateAsync = String(await prepared.context.eval('host("sleep", { ms: 1 }).then(() => "accepted", (e) => e.message)', { promise: true }));
    expect([late, lateAsync]).toEqual(['The call has ended.', 'The call has ended.']);
    expect(logs).toEqual(['during']);
    dispose?.();
    expect(prepared.isolate.isDisposed).toBe(true);
  });

  it('disposes at once, deferDispose or not, when a limit ended the call', async () => {
    const limits = resolveLimits(DEFAULT_LIMITS, { cpuTimeMs: 100, wallTimeMs: 3000 });
    const prepared = await prepareIsolate(FAKE_RUNTIME, limits.heapMiB);
    let deferred = false;
    const outcome = await runInIsolate({
      runtime: FAKE_RUNTIME, bundle: fakeBundle('for (;;) {}'), input: { kind: 'tool', params: {}, callId: 'l', sessionId: null },
      limits, handlers: { async: {}, sync: {} }, deferDispose: () => { deferred = true; },
    }, prepared);
    expect(outcome).toMatchObject({ ok: false, error: { kind: 'timeout' } });
    expect(deferred).toBe(false);
    expect(prepared.isolate.isDisposed).toBe(true);
  });

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

  it('hands out each warm isolate once, and refills only when asked (after the call)', async () => {
    const warm = new WarmIsolates(FAKE_RUNTIME, 64, 2);
    try {
      await vi.waitFor(() => { expect(warm.size).toBe(2); });
      expect(warm.take(32, FAKE_RUNTIME.hash)).toBeUndefined();
      expect(warm.take(64, 'another-runtime')).toBeUndefined();
      const first = warm.take(64, FAKE_RUNTIME.hash);
      const second = warm.take(64, FAKE_RUNTIME.hash);
      expect(first).toBeDefined();
      expect(second).toBeDefined();
      expect(second).not.toBe(first);
      expect(warm.take(64, FAKE_RUNTIME.hash)).toBeUndefined();
      // Taking starts nothing: preparing would compete with the call the isolate was taken for.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(warm.size).toBe(0);
      warm.refill();
      await vi.waitFor(() => { expect(warm.size).toBe(2); });
      const third = warm.take(64, FAKE_RUNTIME.hash);
      expect(third === first || third === second).toBe(false);
      for (const prepared of [first, second, third]) prepared?.isolate.dispose();
    } finally {
      warm.close();
    }
  });

  it('compiles the expected bundle ahead without running it; a call of that bundle uses it, a call of another compiles its own', async () => {
    // Top-level side effect: had compiling ahead run the bundle, the call would see a count of 2.
    const expected = fakeBundle('return String(globalThis.topLevelRuns);');
    const bundle = { ...expected, code: `globalThis.topLevelRuns = (globalThis.topLevelRuns ?? 0) + 1;\n${expected.code}` };
    const other = fakeBundle('return "other";');
    // Only a bundle with a code cache is compiled ahead (it is then quick): the first call makes it.
    expect(await run('', { bundle })).toMatchObject({ ok: true, value: { content: '1' } });
    const warm = new WarmIsolates(FAKE_RUNTIME, 64, 2);
    warm.expect(bundle);
    try {
      await vi.waitFor(() => { expect(warm.size).toBe(2); });
      const ahead = warm.take(64, FAKE_RUNTIME.hash);
      const alsoAhead = warm.take(64, FAKE_RUNTIME.hash);
      expect(ahead?.precompiled?.hash).toBe(bundle.hash);
      expect(alsoAhead?.precompiled?.hash).toBe(bundle.hash);
      const used = await runInIsolate({
        runtime: FAKE_RUNTIME, bundle, input: { kind: 'tool', params: {}, callId: 'c2', sessionId: null },
        limits: resolveLimits(DEFAULT_LIMITS, { wallTimeMs: 3000 }), handlers: { async: {}, sync: {} },
      }, ahead);
      expect(used).toMatchObject({ ok: true, value: { content: '1' } });
      expect(used.phases.compile).toBeLessThan(1);
      expect(await runInIsolate({
        runtime: FAKE_RUNTIME, bundle: other, input: { kind: 'tool', params: {}, callId: 'c3', sessionId: null },
        limits: resolveLimits(DEFAULT_LIMITS, { wallTimeMs: 3000 }), handlers: { async: {}, sync: {} },
      }, alsoAhead)).toMatchObject({ ok: true, value: { content: 'other' } });
      warm.expect(undefined);
      warm.refill();
      await vi.waitFor(() => { expect(warm.size).toBe(2); });
      const plain = warm.take(64, FAKE_RUNTIME.hash);
      expect(plain?.precompiled).toBeUndefined();
      plain?.isolate.dispose();
    } finally {
      warm.close();
    }
  });
});

describe('primeRuntimeCodeCache', () => {
  it('caches the runtime with the functions a call runs compiled, and isolates boot from it', async () => {
    const runtime = { ...FAKE_RUNTIME, hash: 'fake-runtime-primed' };
    const fresh = new ivm.Isolate({ memoryLimit: 32 });
    const compiled = (await fresh.compileScript(runtime.code, { filename: 'paddock:runtime', produceCachedData: true })) as ivm.Script & ivm.CachedDataResult;
    const compileTimeBytes = compiled.cachedData?.copy().byteLength ?? 0;
    fresh.dispose();
    await primeRuntimeCodeCache(runtime, 32);
    const primed = codeCache.get(`runtime:${runtime.hash}`);
    expect(primed).toBeDefined();
    expect(primed?.byteLength ?? 0).toBeGreaterThan(compileTimeBytes);
    const limits = resolveLimits(DEFAULT_LIMITS, {});
    const outcome = await runInIsolate({
      runtime, bundle: fakeBundle('return "after priming";'), input: { kind: 'tool', params: {}, callId: 'p', sessionId: null }, limits, handlers: { async: {}, sync: {} },
    });
    expect(outcome).toMatchObject({ ok: true, value: { content: 'after priming' } });
  });
});

describe('createRuntimeSnapshot', () => {
  const limits = resolveLimits(DEFAULT_LIMITS, { wallTimeMs: 3000 });
  const call = (runtime: IsolateCall['runtime'], body: string) => runInIsolate({
    runtime, bundle: fakeBundle(body), input: { kind: 'tool', params: {}, callId: 's', sessionId: null }, limits, handlers: { async: {}, sync: {} },
  });

  it('makes isolates that boot from it, each fresh: nothing one call leaves reaches the next', async () => {
    const snapshot = await createRuntimeSnapshot(FAKE_RUNTIME, 32);
    try {
      const runtime = { ...FAKE_RUNTIME, snapshot };
      expect(await call(runtime, 'const before = String(globalThis.leak); globalThis.leak = "set"; Object.prototype.polluted = 1; return before;')).toMatchObject({ ok: true, value: { content: 'undefined' } });
      expect(await call(runtime, 'return String(globalThis.leak) + "," + String(({}).polluted);')).toMatchObject({ ok: true, value: { content: 'undefined,undefined' } });
      // The warm-up (a module, a call) ran in a context the snapshot does not keep.
      const prepared = await prepareIsolate(runtime, 32);
      expect(prepared.context.evalSync('typeof __paddock_module + "," + typeof __paddock_request + "," + typeof aborted')).toBe('undefined,undefined,undefined');
      prepared.isolate.dispose();
      const randoms = await Promise.all([1, 2, 3].map(() => call(runtime, 'return String(Math.random());')));
      expect(new Set(randoms.map((outcome) => (outcome.ok && 'content' in outcome.value ? outcome.value.content : 'failed'))).size).toBe(3);
      // Limits hold in snapshot isolates too.
      expect(await runInIsolate({ runtime, bundle: fakeBundle('for (;;) {}'), input: { kind: 'tool', params: {}, callId: 's', sessionId: null }, limits: resolveLimits(DEFAULT_LIMITS, { cpuTimeMs: 100 }), handlers: { async: {}, sync: {} } }))
        .toMatchObject({ ok: false, error: { kind: 'timeout' } });
      const warm = new WarmIsolates(FAKE_RUNTIME, 32, 1);
      try {
        warm.useRuntime(runtime);
        expect(() => { warm.useRuntime({ ...runtime, hash: 'another' }); }).toThrow(/one runtime/);
      } finally {
        warm.close();
      }
    } finally {
      snapshot.release();
    }
  });

  it('throws for a runtime its isolates cannot serve a call with', async () => {
    const broken = { hash: 'broken-runtime', code: FAKE_RUNTIME.code.replace('return typeof v === \'string\'', 'return typeof v === \'number\'') };
    expect(broken.code).not.toBe(FAKE_RUNTIME.code);
    await expect(createRuntimeSnapshot(broken, 32)).rejects.toThrow(/trivial call/);
  });
});
