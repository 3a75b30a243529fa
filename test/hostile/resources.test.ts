/**
 * Hostile: exhausting resources. Endless loops (sync, in promise chains, microtasks, timers,
 * getters, a module's top level), deep recursion, memory bombs inside the heap limit, timer and
 * host-operation floods, catastrophic regexes, a thread parked in Atomics.wait, and fifty bad calls
 * at once. Each breach ends only its call, with the exact kind and message, and no worker dies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CPU_BOUND, CPU_TIMEOUT, MEMORY_LIMIT, WALL_BOUND, WALL_TIMEOUT, expectFailure, expectNextCallWorks, expectResult, startHostile,
} from './harness.ts';
import type { ExpectedFailure, Hostile } from './harness.ts';

let h: Hostile;
beforeAll(async () => { h = await startHostile({ workers: 2 }); });
afterAll(async () => { await h.close(); });

/** A memory bomb: the heap limit must fire first, however long the garbage collector struggles near it. */
const MEMORY_BOUND = { cpuTimeMs: 5_000, wallTimeMs: 10_000 };
const stackOverflow = { kind: 'tool_error', name: 'RangeError', message: 'Maximum call stack size exceeded' } as const;
const allocationFailed = { kind: 'tool_error', name: 'RangeError', message: 'Array buffer allocation failed' } as const;

describe('endless loops', () => {
  it('a synchronous endless loop ends at the CPU limit', async () => {
    expectFailure(await h.exec(`for (;;) {}`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    await expectNextCallWorks(h);
  });

  it('an endless loop of awaits ends at the CPU limit', async () => {
    expectFailure(await h.exec(`for (;;) await null;`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    await expectNextCallWorks(h);
  });

  it('endless microtasks (promise reactions, queueMicrotask) end at the CPU limit', async () => {
    expectFailure(await h.exec(`const spin = () => { Promise.resolve().then(spin); }; spin(); await new Promise(() => {});`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    expectFailure(await h.exec(`const spin = () => queueMicrotask(spin); spin(); await new Promise(() => {});`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    await expectNextCallWorks(h);
  });

  it('an endless loop in a timer callback ends at the CPU limit', async () => {
    expectFailure(await h.exec(`setTimeout(() => { for (;;) {} }, 0); await new Promise(() => {});`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    await expectNextCallWorks(h);
  });

  it('an endless loop in a getter the runtime reads on the host\'s behalf ends at the CPU limit', async () => {
    expectFailure(await h.tool(`export default () => ({ content: 'c', get metadata() { for (;;) {} } });`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    expectFailure(await h.tool(`export default () => ({ content: 'c', isError: false, get terminate() { while (true) {} } });`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    await expectNextCallWorks(h);
  });

  it('an endless loop at a tool module\'s top level ends at the CPU limit', async () => {
    expectFailure(await h.tool(`for (;;) {}\nexport default () => 'never';`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    await expectNextCallWorks(h);
  });

  it('a top level that plants an endless execute and then throws ends with its own error; the planted execute never holds the worker', async () => {
    // The top level and the invocation are queued together on the isolate's thread: the invocation
    // runs after a top level that threw, finds the planted module and spins until the isolate is disposed.
    const planted = `globalThis.__paddock_module = { default() { for (;;) {} } };\nthrow new TypeError('top level failed');\nexport default () => 'never';`;
    for (let index = 0; index < 3; index++) {
      expectFailure(await h.tool(planted, { limits: CPU_BOUND }), { kind: 'tool_error', name: 'TypeError', message: 'top level failed' });
    }
    await expectNextCallWorks(h);
  });

  it('a catastrophic regex ends at the CPU limit', async () => {
    expectFailure(await h.exec(`return /(a+)+$/.test('a'.repeat(40) + 'b');`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    expectFailure(await h.exec(`return 'x'.repeat(30).concat('!').replace(/^(\\w+\\s?)*$/, 'y');`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    await expectNextCallWorks(h);
  });

  it('a thread parked in Atomics.wait on a SharedArrayBuffer ends at the wall limit', async () => {
    expectFailure(await h.exec(`return Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);`, { limits: WALL_BOUND }), WALL_TIMEOUT);
    await expectNextCallWorks(h);
  });
});

describe('deep recursion', () => {
  it('unbounded recursion is a clean RangeError, in user code and in a toJSON the runtime calls', async () => {
    expectFailure(await h.exec(`const f = () => f(); f();`), stackOverflow);
    expectFailure(await h.exec(`return { toJSON() { const g = (n) => g(n + 1) + 1; return g(0); } };`), stackOverflow);
    expectFailure(await h.exec(`const p = new Proxy({}, { get: (target, key, receiver) => receiver[key] }); return p.x;`), stackOverflow);
    await expectNextCallWorks(h);
  });
});

describe('memory bombs inside the heap limit', () => {
  it('array growth ends at the heap limit', async () => {
    expectFailure(await h.exec(`const kept = []; for (let i = 0; ; i++) kept.push(new Array(1e4).fill(i));`, { limits: MEMORY_BOUND }), MEMORY_LIMIT);
    await expectNextCallWorks(h);
  });

  it('an unbounded promise chain (every link kept alive by the next) ends at the heap limit', async () => {
    expectFailure(await h.exec(`let chain = Promise.resolve(); for (;;) chain = chain.then(() => {});`, { limits: MEMORY_BOUND }), MEMORY_LIMIT);
    await expectNextCallWorks(h);
  });

  it('a Map of objects ends at the heap limit', async () => {
    expectFailure(await h.exec(`const m = new Map(); for (let i = 0; ; i++) m.set(i, new Array(1e4).fill({ i }));`, { limits: MEMORY_BOUND }), MEMORY_LIMIT);
    await expectNextCallWorks(h);
  });

  it('string doubling is a RangeError at V8\'s string length', async () => {
    expectFailure(await h.exec(`let s = 'x'; for (;;) s += s;`), { kind: 'tool_error', name: 'RangeError', message: 'Invalid string length' });
    await expectNextCallWorks(h);
  });

  it('huge and accumulated ArrayBuffers, SharedArrayBuffers and encoder output count against the heap', async () => {
    expectFailure(await h.exec(`return new ArrayBuffer(2 ** 31).byteLength;`), allocationFailed);
    expectFailure(await h.exec(`const kept = []; for (let i = 0; i < 100; i++) kept.push(new Uint8Array(16 * 1024 * 1024)); return kept.length;`), allocationFailed);
    expectFailure(await h.exec(`const kept = []; for (let i = 0; i < 100; i++) kept.push(new SharedArrayBuffer(16 * 1024 * 1024)); return kept.length;`), allocationFailed);
    expectFailure(await h.exec(`return new TextEncoder().encode('x'.repeat(2 ** 28)).length;`), allocationFailed);
    await expectNextCallWorks(h);
  });

  it('random bytes are capped as Web Crypto caps them', async () => {
    expectFailure(await h.exec(`return crypto.getRandomValues(new Uint8Array(65_537)).length;`), {
      kind: 'tool_error', name: 'QuotaExceededError', message: "The ArrayBufferView's byte length (65537) exceeds the number of bytes of entropy available via this API (65536)",
    });
    await expectNextCallWorks(h);
  });
});

describe('timer and host-operation floods', () => {
  it('a setInterval flood ends at the wall limit', async () => {
    expectFailure(await h.exec(`let ticks = 0; setInterval(() => { ticks++; }, 0); await new Promise(() => {});`, { limits: WALL_BOUND }), WALL_TIMEOUT);
    await expectNextCallWorks(h);
  });

  it('a million setTimeouts stop at the pending host-operation cap', async () => {
    expectFailure(await h.exec(`for (let i = 0; i < 1e6; i++) setTimeout(() => {}, 60_000);`), {
      kind: 'tool_error', name: 'Error', message: 'The call has more than 256 host operations pending.',
    });
    await expectNextCallWorks(h);
  });

  it('a call stops at its total host-operation cap', async () => {
    expectFailure(await h.exec(`for (;;) await new Promise((resolve) => setTimeout(resolve, 0));`, { limits: { maxHostOps: 50 } }), {
      kind: 'tool_error', name: 'Error', message: 'The call started more than 50 host operations.',
    });
    await expectNextCallWorks(h);
  });

  // Was an open vulnerability, now fixed (sandbox/host/run-in-isolate.ts, doors.call): maxHostOps counts only asynchronous host
  // operations. Synchronous ones (Deno.env.get/has, Deno.cwd, crypto random bytes) are unbounded, and each env denial
  // writes an audit record: a loop of denied Deno.env.get calls writes ~12,000 audit records a second until the wall
  // limit (about 120,000 per call with the default 10 s), where an asynchronous loop stops at maxHostOps.
  it('synchronous host operations count against the host-operation cap too (no audit flood)', async () => {
    const before = h.audit.length;
    expectFailure(await h.exec(`
      for (let i = 0; i < 1000; i++) {
        try { Deno.env.get('HIDDEN_KEY'); } catch (error) { if (error.name !== 'NotCapable') throw error; }
      }
      return 'looped';`, { limits: { maxHostOps: 50 } }), {
      kind: 'tool_error', name: 'Error', message: 'The call started more than 50 host operations.',
    });
    expect(h.audit.length - before).toBeLessThanOrEqual(50);
  });

  it('string callbacks are never evaluated by timers', async () => {
    expectFailure(await h.exec(`setTimeout('globalThis.ran = 1', 0); return typeof ran;`), { kind: 'tool_error', name: 'TypeError', message: 'Callback must be a function.' });
    await expectNextCallWorks(h);
  });

  it('timers left running when the result is returned die with the isolate', async () => {
    const outcome = await h.exec(`setInterval(() => console.log('tick'), 0); setTimeout(() => { for (;;) {} }, 50); return 'returned';`, { limits: CPU_BOUND });
    expectResult(outcome, 'returned');
    await expectNextCallWorks(h);
    expect(outcome.logs.length).toBeLessThan(5);
  });
});

describe('a call that ignores its abort', () => {
  it('is ended with aborted promptly while stuck in a loop', async () => {
    const controller = new AbortController();
    const started = performance.now();
    const pending = h.exec('for (;;) {}', { limits: { cpuTimeMs: 5_000, wallTimeMs: 10_000 }, signal: controller.signal });
    setTimeout(() => { controller.abort(); }, 200);
    expectFailure(await pending, { kind: 'aborted', name: 'AbortError', message: 'The call was aborted.' });
    expect(performance.now() - started).toBeLessThan(2_000);
    await expectNextCallWorks(h);
  });
});

describe('fifty bad calls at once', () => {
  it('each ends with its own exact outcome, and the pool stays whole', async () => {
    const cpu = { cpuTimeMs: 100, wallTimeMs: 10_000 };
    const wall = { cpuTimeMs: 5_000, wallTimeMs: 300 };
    const kinds: { code: string; limits?: Record<string, number>; expected: ExpectedFailure }[] = [
      { code: 'for (;;) {}', limits: cpu, expected: { kind: 'timeout', name: 'TimeoutError', message: 'The call exceeded its CPU-time limit of 100 ms.' } },
      { code: 'const kept = []; for (;;) kept.push(new Array(1e4).fill(1));', limits: MEMORY_BOUND, expected: MEMORY_LIMIT },
      { code: 'throw new TypeError("bad call");', expected: { kind: 'tool_error', name: 'TypeError', message: 'bad call' } },
      { code: 'await fetch("http://169.254.169.254/latest/meta-data/");', expected: { kind: 'not_capable', name: 'NotCapable', message: 'Requires net access to "169.254.169.254:80", run again with the --allow-net flag' } },
      { code: 'return "x".repeat(20_000);', limits: { maxOutputBytes: 10_000 }, expected: { kind: 'output_limit', name: 'OutputLimitError', message: "The call's output (the result included) exceeded its limit of 10000 bytes." } },
      { code: 'await new Promise(() => {});', limits: wall, expected: { kind: 'timeout', name: 'TimeoutError', message: 'The call exceeded its wall-time limit of 300 ms.' } },
      { code: 'const f = () => f(); f();', expected: stackOverflow },
      { code: 'Deno.env.toObject();', expected: { kind: 'not_capable', name: 'NotCapable', message: 'Requires env access, run again with the --allow-env flag' } },
      { code: 'return constructor.constructor("return process")().pid;', expected: { kind: 'tool_error', name: 'ReferenceError', message: 'process is not defined' } },
      { code: 'for (let i = 0; i < 1e6; i++) setTimeout(() => {}, 60_000);', expected: { kind: 'tool_error', name: 'Error', message: 'The call has more than 256 host operations pending.' } },
    ];
    const calls = Array.from({ length: 50 }, (_, index) => kinds[index % kinds.length]!);
    const outcomes = await Promise.all(calls.map((call) => h.exec(call.code, call.limits === undefined ? {} : { limits: call.limits })));
    outcomes.forEach((outcome, index) => { expectFailure(outcome, calls[index]!.expected); });
    expect(h.sandbox.pool.inFlight).toBe(0);
    await expectNextCallWorks(h);
  });
});
