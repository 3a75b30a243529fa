/**
 * Hostile: what a call hands back. Results with getters, toJSON, proxies, cycles, BigInt and
 * symbols; promises and thenables; thrown values of every shape; hijacking the invocation's own
 * promise through Object.prototype.then; output past the limit (result, metadata, logs, updates);
 * and prototype pollution of guest intrinsics, which must neither break the runtime nor reach the
 * host or the next call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CPU_BOUND, CPU_TIMEOUT, WALL_BOUND, WALL_TIMEOUT, expectFailure, expectNextCallWorks, expectNothingLeaked, expectResult, expectToolResult, startHostile,
} from './harness.ts';
import type { Hostile } from './harness.ts';

let h: Hostile;
beforeAll(async () => { h = await startHostile({ workers: 1 }); });
afterAll(async () => { await h.close(); });

const OUTPUT = { maxOutputBytes: 10_000 };
const outputLimit = (what: string) => ({
  kind: 'output_limit', name: 'OutputLimitError', message: `The call's output (${what} included) exceeded its limit of 10000 bytes.`,
} as const);

describe('result values the runtime reads', () => {
  it('getters on a result run in the guest and only their values cross', async () => {
    expectResult(await h.exec(`let n = 0; return { get a() { return ++n; }, get b() { return [n, typeof process]; } };`), { a: 1, b: [1, 'undefined'] });
    expectFailure(await h.exec(`return { get a() { throw new RangeError('getter says no'); } };`), { kind: 'tool_error', name: 'RangeError', message: 'getter says no' });
    await expectNextCallWorks(h);
  });

  it('an endless getter or toJSON on a result ends at the CPU limit', async () => {
    expectFailure(await h.exec(`return { get forever() { for (;;) {} } };`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    expectFailure(await h.exec(`return { toJSON() { for (;;) {} } };`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    expectFailure(await h.tool(`export default () => ({ get content(): string { for (;;) {} } });`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    await expectNextCallWorks(h);
  });

  it('toJSON may replace a value, but what crosses is still plain JSON data', async () => {
    expectResult(await h.exec(`return { secret: 's', toJSON() { return { replaced: [1, { toJSON: () => 'inner' }], fn: () => 1 }; } };`), { replaced: [1, 'inner'] });
    await expectNextCallWorks(h);
  });

  it('a Proxy result is read through its traps inside the guest; a throwing trap is the tool\'s error', async () => {
    expectResult(await h.exec(`return new Proxy({}, {
      ownKeys: () => ['a', 'b'],
      getOwnPropertyDescriptor: () => ({ value: 0, enumerable: true, configurable: true }),
      get: (target, key) => key === 'toJSON' ? undefined : 'trapped ' + String(key),
    });`), { a: 'trapped a', b: 'trapped b' });
    expectFailure(await h.exec(`return new Proxy({}, { ownKeys() { throw new TypeError('trap refuses'); } });`), { kind: 'tool_error', name: 'TypeError', message: 'trap refuses' });
    expectToolResult(await h.tool(`export default () => new Proxy({ content: 'target' }, { get: (target, key) => key === 'content' ? 'from the proxy' : undefined });`), { content: 'from the proxy' });
    await expectNextCallWorks(h);
  });

  it('a cyclic result is a TypeError, deep nesting a RangeError, never a host failure', async () => {
    expectFailure(await h.exec(`const o = { a: 1 }; o.self = o; return o;`), {
      kind: 'tool_error', name: 'TypeError',
      message: "Converting circular structure to JSON\n    --> starting at object with constructor 'Object'\n    --- property 'self' closes the circle",
    });
    expectFailure(await h.exec(`let o = null; for (let i = 0; i < 20000; i++) o = [o]; return o;`), { kind: 'tool_error', name: 'RangeError', message: 'Maximum call stack size exceeded' });
    await expectNextCallWorks(h);
  });

  it('BigInt is a TypeError; symbols, functions, buffers, maps and dates become JSON', async () => {
    expectFailure(await h.exec(`return { n: 10n ** 30n };`), { kind: 'tool_error', name: 'TypeError', message: 'Do not know how to serialize a BigInt' });
    expectFailure(await h.tool(`export default () => ({ content: 'c', metadata: { n: 1n } });`), { kind: 'tool_error', name: 'TypeError', message: 'Do not know how to serialize a BigInt' });
    expectResult(await h.exec(`return [Symbol('s'), () => 1, undefined, NaN, new Map([[1, 2]]), new ArrayBuffer(4), new SharedArrayBuffer(4),
      new Uint8Array([7]), new Date(0), -0, Infinity, Object.create(null), new WeakRef({}), { [Symbol('k')]: 1, f() {} }];`),
    [null, null, null, null, {}, {}, {}, { 0: 7 }, '1970-01-01T00:00:00.000Z', 0, null, {}, {}, {}]);
    expectResult(await h.exec(`return Symbol('alone');`), null);
    await expectNextCallWorks(h);
  });
});

describe('promises and thenables handed back', () => {
  it('a rejected promise is the tool\'s error; a thenable is adopted; a throwing then is the error', async () => {
    expectFailure(await h.exec(`return Promise.reject(new TypeError('rejected'));`), { kind: 'tool_error', name: 'TypeError', message: 'rejected' });
    expectResult(await h.exec(`return { then(resolve) { resolve({ adopted: typeof process }); } };`), { adopted: 'undefined' });
    expectFailure(await h.exec(`return { then() { throw new SyntaxError('bad then'); } };`), { kind: 'tool_error', name: 'SyntaxError', message: 'bad then' });
    await expectNextCallWorks(h);
  });

  it('a promise or thenable that never settles ends at the wall limit', async () => {
    expectFailure(await h.exec(`return new Promise(() => {});`, { limits: WALL_BOUND }), WALL_TIMEOUT);
    expectFailure(await h.tool(`export default () => ({ then() {} });`, { limits: WALL_BOUND }), WALL_TIMEOUT);
    await expectNextCallWorks(h);
  });

  it('an unhandled rejection ends the call with that error (as Deno ends the program)', async () => {
    expectFailure(await h.exec(`Promise.reject(new URIError('nobody listens')); await new Promise((resolve) => setTimeout(resolve, 1)); return 'finished';`), {
      kind: 'tool_error', name: 'URIError', message: 'nobody listens',
    });
    expectResult(await h.exec(`const late = Promise.reject(new Error('handled late')); await null; late.catch(() => {}); return 'finished';`), 'finished');
    await expectNextCallWorks(h);
  });

  it('Object.prototype.then cannot hijack the invocation: what the host receives is still the checked result', async () => {
    // Fixed in sandbox/guest/invoke.ts: before, the runtime's result object was adopted as a thenable, and the tool's
    // then() resolved the invocation with anything (a 20 MB ArrayBuffer or a Map passed the result and output checks).
    const hijack = `Object.prototype.then = function (resolve) { delete Object.prototype.then; resolve({ result: new ArrayBuffer(20e6), content: 'forged', metadata: new Map([[1, 'x'.repeat(5e6)]]) }); };`;
    expectResult(await h.exec(`${hijack} return 'real';`, { limits: OUTPUT }), 'real');
    // A tool's own returned object is its own thenable to resolve as it likes; what it resolves to is still normalized
    // (the Map becomes {}, the ArrayBuffer is dropped), so nothing but checked JSON data reaches the host.
    expectToolResult(await h.tool(`export default () => { ${hijack} return { content: 'real', metadata: { kept: true } }; };`, { limits: OUTPUT }), {
      content: 'forged', metadata: {},
    });
    expectFailure(await h.exec(`${hijack} throw new TypeError('the real error');`, { limits: OUTPUT }), { kind: 'tool_error', name: 'TypeError', message: 'the real error' });
    // A throwing `then` getter: the runtime's own result objects never consult it.
    expectResult(await h.exec(`Object.defineProperty(Object.prototype, 'then', { get() { throw new Error('hijacked'); } }); return 'primitive';`), 'primitive');
    expectFailure(await h.exec(`Object.defineProperty(Object.prototype, 'then', { get() { throw new Error('hijacked'); } }); throw new RangeError('own');`), {
      kind: 'tool_error', name: 'RangeError', message: 'own',
    });
    await expectNextCallWorks(h);
  });
});

describe('thrown values', () => {
  it('non-Error throws are reported with a name and a string message', async () => {
    expectFailure(await h.exec(`throw 'a string';`), { kind: 'tool_error', name: 'Error', message: 'a string' });
    expectFailure(await h.exec(`throw { code: 7 };`), { kind: 'tool_error', name: 'Error', message: '[object Object]' });
    expectFailure(await h.exec(`throw null;`), { kind: 'tool_error', name: 'Error', message: 'null' });
    expectFailure(await h.exec(`throw { name: 'Custom', message: { toString() { return 'coerced'; } } };`), { kind: 'tool_error', name: 'Custom', message: 'coerced' });
    await expectNextCallWorks(h);
  });

  it('a thrown symbol, a thrown Proxy and an error whose getters throw cannot be described, and say so', async () => {
    const undescribable = { kind: 'tool_error', name: 'Error', message: 'An error was thrown that cannot be described.' } as const;
    expectFailure(await h.exec(`throw Symbol('s');`), undescribable);
    expectFailure(await h.exec(`throw new Proxy({}, { get() { throw new Error('trap'); }, getPrototypeOf() { throw new Error('proto'); } });`), undescribable);
    expectFailure(await h.exec(`throw { get name() { throw 1; }, get message() { throw 2; } };`), undescribable);
    await expectNextCallWorks(h);
  });

  it('an error whose message getter never returns ends at the CPU limit', async () => {
    expectFailure(await h.exec(`throw { get message() { for (;;) {} } };`, { limits: CPU_BOUND }), CPU_TIMEOUT);
    await expectNextCallWorks(h);
  });

  it('a message carrying a fake host stack is reported as the message the tool wrote, nothing more', async () => {
    const outcome = await h.exec(`throw new Error('first line\\n    at evil (/work/main/sandbox/host/run-in-isolate.ts:1:1)');`);
    expect(outcome.ok ? null : outcome.error).toEqual({ kind: 'tool_error', name: 'Error', message: 'first line\n    at evil (/work/main/sandbox/host/run-in-isolate.ts:1:1)' });
    await expectNextCallWorks(h);
  });

  // Was an open vulnerability, now fixed (sandbox/host/run-in-isolate.ts, classifyIsolateFailure): an error that reaches the host as
  // an isolated-vm exception (an unhandled rejection, a throw at a tool module's top level) is classified by matching
  // its guest-written message, so a tool forges the sandbox's own limit errors: `memory limit` reads as
  // `memory_limit`, `Script execution timed out` as `timeout`.
  it('a tool cannot forge a memory_limit or timeout outcome through an error message', async () => {
    expectFailure(await h.exec(`Promise.reject(new Error('Isolate was disposed during execution due to memory limit')); return 1;`), {
      kind: 'tool_error', name: 'Error', message: 'Isolate was disposed during execution due to memory limit',
    });
    expectFailure(await h.tool(`throw new Error('Script execution timed out.');\nexport default () => 'never';`), {
      kind: 'tool_error', name: 'Error', message: 'Script execution timed out.',
    });
  });

  // Was open, now fixed (sandbox/host/run-in-isolate.ts): a non-Error rejection reaches the caller with isolated-vm's own message,
  // naming the isolation library ("An object was thrown from supplied code within isolated-vm, but ...").
  it('an unhandled non-Error rejection is described without naming the host\'s internals', async () => {
    const outcome = await h.exec(`Promise.reject(Symbol('s')); return 1;`);
    expect(outcome.ok ? null : outcome.error.kind).toBe('tool_error');
    expectNothingLeaked(outcome);
  });
});

describe('output past the limit', () => {
  it('a huge string or array result is output_limit', async () => {
    expectFailure(await h.exec(`return 'x'.repeat(20_000);`, { limits: OUTPUT }), outputLimit('the result'));
    expectFailure(await h.exec(`return new Array(5000).fill('abc');`, { limits: OUTPUT }), outputLimit('the result'));
    expectFailure(await h.tool(`export default () => ({ content: 'small', metadata: { rows: new Array(5000).fill({ a: 1 }) } });`, { limits: OUTPUT }), outputLimit('the result'));
    await expectNextCallWorks(h);
  });

  it('a log flood is output_limit, and no more than the limit was relayed', async () => {
    const outcome = await h.exec(`for (let i = 0; i < 1000; i++) console.log('y'.repeat(1000)); return 'done';`, { limits: OUTPUT });
    expectFailure(outcome, outputLimit('logs'));
    expect(outcome.logs.reduce((bytes, line) => bytes + line.text.length + 1, 0)).toBeLessThanOrEqual(10_000);
    await expectNextCallWorks(h);
  });

  it('an update flood is output_limit, and no more than the limit was relayed', async () => {
    const updates: string[] = [];
    const outcome = await h.tool(`export default async (params: unknown, ctx: any) => { for (let i = 0; i < 1000; i++) await ctx.update('u'.repeat(1000)); return 'done'; };`, {
      limits: OUTPUT, onUpdate: (text) => { updates.push(text); },
    });
    expectFailure(outcome, outputLimit('updates'));
    expect(updates.join('').length).toBeLessThanOrEqual(10_000);
    await expectNextCallWorks(h);
  });

  it('logs, updates and the result share one budget', async () => {
    const outcome = await h.tool(`export default async (params: unknown, ctx: any) => {
      console.log('l'.repeat(4000)); await ctx.update('u'.repeat(4000)); return 'r'.repeat(4000); };`, { limits: OUTPUT });
    expectFailure(outcome, outputLimit('the result'));
    await expectNextCallWorks(h);
  });

  // Was an open vulnerability, now fixed (sandbox/host/run-in-isolate.ts): an error's name and message are never counted against
  // maxOutputBytes (only results, logs and updates are), so a tool sends the caller a message as large as its heap
  // allows: here 200 kB through a 10 kB limit; with the default 64 MiB heap, tens of MB per call into the coordinator.
  // The same holds for unhandled rejections and throws at a module's top level.
  it('a huge error message is output_limit too', async () => {
    expectFailure(await h.exec(`throw new Error('m'.repeat(200_000));`, { limits: OUTPUT }), outputLimit('the error'));
  });
});

describe('prototype pollution of guest intrinsics', () => {
  it('patched builtins break neither fetch, env, timers, console, crypto nor the result, in the same call', async () => {
    const outcome = await h.exec(`
      Array.prototype.push = function () { throw new Error('push patched'); };
      Array.prototype[Symbol.iterator] = function* () { yield 'patched iterator'; };
      Promise.prototype.then = function () { throw new Error('then patched'); };
      JSON.stringify = () => '"forged"';
      JSON.parse = () => 'forged';
      Map.prototype.get = Map.prototype.set = () => { throw new Error('map patched'); };
      Function.prototype.call = Function.prototype.apply = Function.prototype.bind = () => { throw new Error('call patched'); };
      Object.defineProperty(Object.prototype, 'hostilePolluted', { value: true, enumerable: true, writable: true, configurable: true });
      Object.prototype.toJSON = undefined;
      String.prototype.toLowerCase = () => 'forged';
      Reflect.apply = () => { throw new Error('reflect patched'); };
      Error.prototype.toString = () => 'forged';
      globalThis.Uint8Array = function () { throw new Error('Uint8Array patched'); };
      globalThis.leftover = 'for the next call';
      const results = {};
      try { await fetch('https://example.com/'); } catch (error) { results.fetch = error.name + ': ' + error.message; }
      try { Deno.env.get('HIDDEN_KEY'); } catch (error) { results.env = error.name + ': ' + error.message; }
      results.env2 = Deno.env.get('GRANTED_KEY');
      results.timer = await new Promise((resolve) => setTimeout(() => resolve('fired'), 1));
      console.log('still', { logging: true });
      results.uuid = crypto.randomUUID().length;
      results.url = new URL('HTTPS://Example.COM/a/../b').href;
      return results;`, { grant: { env: ['GRANTED_KEY'] } });
    // Inherited keys (Object.prototype.hostilePolluted) are not copied: only the call's own data crosses.
    expectResult(outcome, {
      fetch: 'NotCapable: Requires net access to "example.com:443", run again with the --allow-net flag',
      env: 'NotCapable: Requires env access to "HIDDEN_KEY", run again with the --allow-env flag',
      env2: 'granted-value',
      timer: 'fired',
      uuid: 36,
      url: 'https://example.com/b',
    });
    expect(outcome.logs).toEqual([{ level: 'info', text: 'still { logging: true }' }]);
    // expectNextCallWorks checks that none of it (globals, prototypes, natives) reached the next call's isolate.
    await expectNextCallWorks(h);
  });

  it('__proto__ and constructor keys in results stay data: the host\'s prototypes are untouched', async () => {
    const outcome = await h.tool(`export default () => ({
      content: 'c',
      metadata: JSON.parse('{"__proto__": {"hostilePolluted": 1}, "constructor": {"prototype": {"hostilePolluted": 2}}, "nested": {"__proto__": {"isAdmin": true}}}'),
    });`);
    expectToolResult(outcome, {
      content: 'c',
      metadata: JSON.parse('{"__proto__": {"hostilePolluted": 1}, "constructor": {"prototype": {"hostilePolluted": 2}}, "nested": {"__proto__": {"isAdmin": true}}}') as unknown,
    });
    const metadata = outcome.ok ? outcome.metadata : null;
    expect(metadata !== null && Object.hasOwn(metadata, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
    expect((({}) as Record<string, unknown>)['hostilePolluted']).toBeUndefined();
    expect((({}) as Record<string, unknown>)['isAdmin']).toBeUndefined();
    const exec = await h.exec(`return JSON.parse('{"__proto__": {"hostilePolluted": 3}}');`);
    expect(exec.ok && Object.hasOwn(exec.result as object, '__proto__')).toBe(true);
    expect((({}) as Record<string, unknown>)['hostilePolluted']).toBeUndefined();
    await expectNextCallWorks(h);
  });

  it('a tool result keeps its types: content must be a string, flags are true only when true', async () => {
    expectToolResult(await h.tool(`export default () => ({ content: 'c', isError: 'yes', terminate: {}, extra: () => 1 });`), { content: 'c' });
    expectFailure(await h.tool(`export default () => ({ content: { toString() { return 'sneaky'; } } });`), {
      kind: 'tool_error', name: 'TypeError', message: "The tool result's content must be a string; it was object.",
    });
    expectFailure(await h.tool(`export default () => ({ content: 'c', metadata: ['not', 'an', 'object'] });`), {
      kind: 'tool_error', name: 'TypeError', message: "The tool result's metadata must be an object.",
    });
    expectFailure(await h.tool(`export default () => [1];`), {
      kind: 'tool_error', name: 'TypeError', message: 'A tool must return a string or { content, isError?, metadata?, terminate? }; it returned an array.',
    });
    await expectNextCallWorks(h);
  });
});
