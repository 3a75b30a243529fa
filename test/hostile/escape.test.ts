/**
 * Hostile: reaching the host from guest code. Constructor chains, the global object, module
 * loaders, every function reachable from globalThis and ctx (none is a host door, however it is
 * called), callbacks and promises the host hands back, host errors, stack-trace tricks, and the
 * Deno APIs that must not exist. Every case ends with the next call working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CPU_BOUND, expectFailure, expectNextCallWorks, expectNothingLeaked, expectResult, expectToolResult, startHostile } from './harness.ts';
import type { Hostile } from './harness.ts';

let h: Hostile;
beforeAll(async () => { h = await startHostile({ workers: 1 }); });
afterAll(async () => { await h.close(); });

/** The globals a call may see: ECMAScript's (V8 in Node 24), the Web APIs of SPEC §2, Deno, and the module namespace. */
const ALLOWED_GLOBALS = new Set([
  'AggregateError', 'Array', 'ArrayBuffer', 'AsyncDisposableStack', 'Atomics', 'BigInt', 'BigInt64Array', 'BigUint64Array',
  'Boolean', 'DataView', 'Date', 'DisposableStack', 'Error', 'EvalError', 'FinalizationRegistry', 'Float16Array',
  'Float32Array', 'Float64Array', 'Function', 'Infinity', 'Int16Array', 'Int32Array', 'Int8Array', 'Intl', 'Iterator',
  'JSON', 'Map', 'Math', 'NaN', 'Number', 'Object', 'Promise', 'Proxy', 'RangeError', 'ReferenceError', 'Reflect',
  'RegExp', 'Set', 'SharedArrayBuffer', 'String', 'SuppressedError', 'Symbol', 'SyntaxError', 'TypeError', 'URIError',
  'Uint16Array', 'Uint32Array', 'Uint8Array', 'Uint8ClampedArray', 'WeakMap', 'WeakRef', 'WeakSet', 'decodeURI',
  'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'eval', 'globalThis', 'isFinite', 'isNaN',
  'parseFloat', 'parseInt', 'undefined', 'unescape',
  'AbortController', 'AbortSignal', 'Crypto', 'CustomEvent', 'DOMException', 'Event', 'EventTarget', 'Headers', 'Request',
  'Response', 'TextDecoder', 'TextEncoder', 'URL', 'URLSearchParams', 'atob', 'btoa', 'clearInterval', 'clearTimeout',
  'console', 'crypto', 'fetch', 'queueMicrotask', 'self', 'setInterval', 'setTimeout', 'structuredClone',
  'Deno', '__paddock_module',
]);

describe('constructor chains and the global object', () => {
  it('constructor.constructor("return process")() finds no process', async () => {
    expectFailure(await h.exec(`return typeof constructor.constructor('return process')();`), {
      kind: 'tool_error', name: 'ReferenceError', message: 'process is not defined',
    });
    await expectNextCallWorks(h);
  });

  it('the async, generator and async-generator Function constructors find no process either', async () => {
    const outcome = await h.exec(`
      const tries = [
        () => (async () => {}).constructor('return process')(),
        () => (function* () {}).constructor('yield process')().next(),
        () => (async function* () {}).constructor('yield process')().next(),
        () => Function.prototype.constructor.call(null, 'return require')(),
        () => ({}).valueOf.constructor('return Buffer')(),
      ];
      const results = [];
      for (const attempt of tries) {
        try { await attempt(); results.push('reached'); } catch (error) { results.push(error.name + ': ' + error.message); }
      }
      return results;`);
    expectResult(outcome, [
      'ReferenceError: process is not defined',
      'ReferenceError: process is not defined',
      'ReferenceError: process is not defined',
      'ReferenceError: require is not defined',
      'ReferenceError: Buffer is not defined',
    ]);
    await expectNextCallWorks(h);
  });

  it('Function("return this")() is the guest global: only ECMAScript, the Web APIs of SPEC §2 and Deno', async () => {
    const outcome = await h.exec(`return Reflect.ownKeys(Function('return this')()).map(String);`);
    expect(outcome.ok).toBe(true);
    const names = outcome.ok ? (outcome.result as string[]) : [];
    expect(names.filter((name) => !ALLOWED_GLOBALS.has(name))).toEqual([]);
    for (const name of ['process', 'require', 'Buffer', 'global', 'module', 'exports', '__dirname', 'setImmediate', 'WebAssembly']) {
      expect(names).not.toContain(name);
    }
    expectNothingLeaked(outcome);
    await expectNextCallWorks(h);
  });

  it('sloppy eval, indirect eval and with-scopes see the same guest global and no Node', async () => {
    const outcome = await h.exec(`
      const indirect = (0, eval)('this');
      return [indirect === globalThis, eval('typeof process'), (0, eval)('typeof require'), Function('with (globalThis) { return typeof Buffer }')(),
        Object.getPrototypeOf(globalThis) === Object.prototype || Object.getPrototypeOf(Object.getPrototypeOf(globalThis)) === Object.prototype];`);
    expectResult(outcome, [true, 'undefined', 'undefined', 'undefined', true]);
    await expectNextCallWorks(h);
  });
});

describe('module loaders', () => {
  it('dynamic import() of a Node builtin is refused inside the isolate', async () => {
    expectFailure(await h.exec(`const fs = await import('node:fs'); return typeof fs.readFileSync;`), {
      kind: 'tool_error', name: 'Error', message: 'Not supported',
    });
    await expectNextCallWorks(h);
  });

  it('require is not defined, in a snippet or a tool module', async () => {
    expectFailure(await h.exec(`return require('child_process').execSync('id').toString();`), {
      kind: 'tool_error', name: 'ReferenceError', message: 'require is not defined',
    });
    expectFailure(await h.tool(`export default () => (globalThis as any).require('fs').readFileSync('/etc/passwd', 'utf8');`), {
      kind: 'tool_error', name: 'TypeError', message: 'globalThis.require is not a function',
    });
    await expectNextCallWorks(h);
  });

  it('a static import of a Node builtin is a compile error, never bundled', async () => {
    expectFailure(await h.exec(`import fs from 'node:fs'; return fs.readFileSync('/etc/passwd', 'utf8');`), {
      kind: 'compile_error', name: 'SyntaxError', message: 'snippet.js:1:8: Unexpected "fs"',
    });
    await expect(h.tool(`import { readFileSync } from 'node:fs';\nexport default () => readFileSync('/etc/passwd', 'utf8');`)).rejects.toMatchObject({
      kind: 'compile_error', message: expect.stringMatching(/^t\d+\.ts:1:30: "node:fs" is not supported: only relative imports inside the tools folder are bundled$/),
    });
    await expectNextCallWorks(h);
  });
});

describe('the bridge is out of reach', () => {
  it('leaves no __paddock_ name but the module namespace, and no Deno internals', async () => {
    const outcome = await h.exec(`
      return {
        globals: Reflect.ownKeys(globalThis).map(String).filter((key) => /paddock|ivm|isolate|bridge|door/i.test(key)),
        doors: [typeof __paddock_request, typeof __paddock_call, typeof __paddock_cancel, typeof __paddock_boot,
          typeof __paddock_settle, typeof __paddock_invoke, typeof __paddock_abort],
        deno: [typeof Deno.core, typeof Deno[Symbol.for('Deno.internal')], typeof Deno.internal, Object.isFrozen(Deno),
          Object.getPrototypeOf(Deno), Reflect.ownKeys(Deno).filter((key) => typeof key === 'symbol').length],
      };`);
    expectResult(outcome, {
      globals: ['__paddock_module'],
      doors: ['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined'],
      deno: ['undefined', 'undefined', 'undefined', true, null, 0],
    });
    await expectNextCallWorks(h);
  });

  it('no function reachable from globalThis, ctx or params is a door: calling every native one with op shapes reaches no host operation', async () => {
    const outcome = await h.tool(`
      export default async (params: unknown, ctx: unknown) => {
        const seen = new Set<unknown>();
        const queue: unknown[] = [globalThis, ctx, params];
        while (queue.length > 0) {
          const value = queue.shift();
          if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
          seen.add(value);
          queue.push(Object.getPrototypeOf(value));
          for (const key of Reflect.ownKeys(value)) {
            const descriptor = Reflect.getOwnPropertyDescriptor(value, key);
            if (descriptor === undefined) continue;
            queue.push(descriptor.value, descriptor.get, descriptor.set);
          }
        }
        const natives = [...seen].filter((value): value is (...args: unknown[]) => unknown =>
          typeof value === 'function' && /\\{ \\[native code\\] \\}$/.test(Function.prototype.toString.call(value)));
        const shapes: [string, unknown][] = [['cwd', {}], ['envToObject', {}], ['sleep', { ms: 0 }], ['readFile', { path: '/etc/passwd' }], ['fetch', 1]];
        const suspicious: string[] = [];
        for (const fn of natives) {
          for (const [op, args] of shapes) {
            try {
              let result: unknown = Reflect.apply(fn, undefined, [op, args]);
              if (result instanceof Promise) result = await result; // disposeAsync, Array.fromAsync, ...: rejections count too
              if (typeof result === 'object' && result !== null && Object.hasOwn(result, 'ok')) suspicious.push(fn.name + ' returned an outcome');
            } catch (error) {
              const message = String((error as Error | null)?.message);
              if (/host operation|Invalid arguments for|No call is attached|host refused/i.test(message)) suspicious.push(fn.name + ': ' + message);
            }
          }
        }
        return JSON.stringify({ reachable: seen.size > 500, natives: natives.length > 300, suspicious });
      };`);
    expectToolResult(outcome, { content: JSON.stringify({ reachable: true, natives: true, suspicious: [] }) });
    await expectNextCallWorks(h);
  });

  it('ctx is a frozen plain object; its update resolves to undefined and leads to no host object', async () => {
    const updates: string[] = [];
    const outcome = await h.tool(`
      export default async (params: unknown, ctx: any) => {
        const update = ctx.update('half');
        const resolved = await update;
        let reached = 'none';
        try { reached = typeof ctx.update.constructor('return process')(); } catch (error) { reached = (error as Error).message; }
        return JSON.stringify({
          keys: Object.keys(ctx), frozen: Object.isFrozen(ctx), plain: Object.getPrototypeOf(ctx) === Object.prototype,
          promise: update instanceof Promise && update.constructor === Promise, resolved: resolved === undefined,
          signal: ctx.signal instanceof AbortSignal && ctx.signal.constructor === AbortSignal, reached,
          replaced: Reflect.set(ctx, 'update', () => 1),
        });
      };`, { onUpdate: (text) => { updates.push(text); } });
    expectToolResult(outcome, {
      content: JSON.stringify({ keys: ['signal', 'update', 'callId', 'sessionId'], frozen: true, plain: true, promise: true, resolved: true, signal: true, reached: 'process is not defined', replaced: false }),
    });
    expect(updates).toEqual(['half']);
    await expectNextCallWorks(h);
  });

  it('console methods are guest functions: no host object behind them, and what they print is only text', async () => {
    const outcome = await h.exec(`
      const results = [];
      for (const method of ['log', 'error', 'warn', 'info', 'debug', 'trace', 'dir', 'table', 'assert']) {
        try { results.push(typeof console[method].constructor('return process')()); } catch (error) { results.push(error.message); }
      }
      console.log({ process: typeof process, self: globalThis === self });
      return [results.every((text) => text === 'process is not defined'), console.log('x'), Object.getPrototypeOf(console)];`);
    expectResult(outcome, [true, null, null]);
    expect(outcome.logs).toEqual([{ level: 'info', text: '{ process: "undefined", self: true }' }, { level: 'info', text: 'x' }]);
    await expectNextCallWorks(h);
  });

  it('a denied fetch rejects with a guest NotCapable: guest classes all the way, guest-only stack frames', async () => {
    const outcome = await h.exec(`
      const pending = fetch('https://example.com/');
      const isGuestPromise = pending instanceof Promise && pending.constructor === Promise;
      try { await pending; return 'fetched'; } catch (error) {
        let reached;
        try { reached = error.constructor.constructor('return typeof process')(); } catch (inner) { reached = inner.message; }
        return {
          isGuestPromise, name: error.name, message: error.message, notCapable: error instanceof Deno.errors.NotCapable,
          guestError: error instanceof Error, reached, ownKeys: Reflect.ownKeys(error).map(String).sort(), stack: error.stack,
        };
      }`);
    expectResult(outcome, {
      isGuestPromise: true, name: 'NotCapable', message: 'Requires net access to "example.com:443", run again with the --allow-net flag',
      notCapable: true, guestError: true, reached: 'undefined', ownKeys: ['message', 'name', 'stack'],
      stack: expect.stringMatching(/^NotCapable: Requires net access to "example\.com:443", run again with the --allow-net flag\n(\s+at \S+ \(paddock:runtime:\d+:\d+\)\n?)+$/),
    });
    await expectNextCallWorks(h);
  });

  it('a host file-system error reaches the guest as Deno\'s error naming only the requested path', async () => {
    const outcome = await h.exec(`
      try { await Deno.readTextFile('missing/nope.txt'); return 'read'; } catch (error) {
        return [error.name, error.message, error instanceof Deno.errors.NotFound, error.cause ?? null, /work/.test(error.stack)];
      }`, { grant: { read: ['.'] } });
    expectResult(outcome, ['NotFound', "No such file or directory (os error 2): readfile 'missing/nope.txt'", true, null, false]);
    await expectNextCallWorks(h);
  });
});

describe('stack-trace tricks', () => {
  it('Error.prepareStackTrace sees no function and no receiver of the runtime, even across a door refusal', async () => {
    const outcome = await h.exec(`
      const frames = [];
      Error.prepareStackTrace = (error, callSites) => {
        for (const site of callSites) frames.push([site.getFileName(), typeof site.getFunction(), typeof site.getThis()]);
        return 'prepared';
      };
      const stacks = [];
      try { for (let i = 0; i < 300; i++) setTimeout(() => {}, 60000); } catch (error) { stacks.push(error.message, error.stack); }
      try { new URL('::not a url'); } catch (error) { stacks.push(error.stack); }
      try { await Deno.readTextFile('/etc/passwd'); } catch (error) { stacks.push(error.stack); }
      try { structuredClone(() => 1); } catch (error) { stacks.push(error.stack); }
      const runtimeFrames = frames.filter(([file]) => file === 'paddock:runtime');
      return {
        stacks,
        runtimeFrames: runtimeFrames.length > 5,
        exposed: runtimeFrames.filter(([, fn, self]) => fn !== 'undefined' || self !== 'undefined'),
        files: [...new Set(frames.map(([file]) => file))].sort(),
      };`);
    expectResult(outcome, {
      stacks: ['The call has more than 256 host operations pending.', 'prepared', 'prepared', 'prepared', 'prepared'],
      runtimeFrames: true,
      exposed: [],
      files: ['paddock:runtime', 'snippet.js'],
    });
    await expectNextCallWorks(h);
  });

  it('a hanging or throwing Error.prepareStackTrace is never run by the runtime when it reports the error', async () => {
    expectFailure(await h.exec(`Error.prepareStackTrace = () => { for (;;) {} }; throw new RangeError('reported without a stack');`, { limits: CPU_BOUND }), {
      kind: 'tool_error', name: 'RangeError', message: 'reported without a stack',
    });
    expectFailure(await h.tool(`export default () => { (Error as any).prepareStackTrace = () => { throw new Error('hijacked'); }; throw new TypeError('plain'); };`), {
      kind: 'tool_error', name: 'TypeError', message: 'plain',
    });
    await expectNextCallWorks(h);
  });

  it('fn.caller of user functions called by the runtime (toJSON, timers, thenables, getters) is null', async () => {
    const outcome = await h.exec(`
      const callers = {};
      await new Promise((resolve) => setTimeout(function timer() { callers.timer = String(timer.caller); resolve(); }, 0));
      function then(resolve) { callers.then = String(then.caller); resolve(); }
      await { then };
      function listener() { callers.listener = String(listener.caller); }
      const target = new EventTarget(); target.addEventListener('x', listener); target.dispatchEvent(new Event('x'));
      function toJSON() { return { ...callers, toJSON: String(toJSON.caller) }; }
      return { toJSON };`);
    expectResult(outcome, { timer: 'null', then: 'null', listener: 'null', toJSON: 'null' });
    await expectNextCallWorks(h);
  });

  it('Error.captureStackTrace and a huge stackTraceLimit show only guest frames', async () => {
    const outcome = await h.exec(`
      Error.stackTraceLimit = Infinity;
      const holder = {};
      const deep = (n) => (n === 0 ? (Error.captureStackTrace(holder), holder.stack) : deep(n - 1));
      const stack = deep(2000);
      return stack.split('\\n').slice(1).map((line) => line.replace(/:\\d+:\\d+\\)$/, ')')).filter((line) => !line.includes('snippet.js'));`);
    expectResult(outcome, ['    at runExec (paddock:runtime)', '    at invoke (paddock:runtime)', '    at invokeModule (paddock:runtime)']);
    await expectNextCallWorks(h);
  });
});

describe('what Deno has and Paddock must not', () => {
  it('has no Deno.exit, run, Command, spawn, kill, dlopen, connect, listen, serve, openKv or chdir', async () => {
    const names = ['exit', 'run', 'Command', 'ChildProcess', 'spawn', 'spawnSync', 'kill', 'dlopen', 'connect', 'listen', 'serve', 'openKv', 'chdir', 'execPath', 'osRelease', 'hostname', 'loadavg', 'systemMemoryInfo', 'pid', 'ppid', 'args', 'mainModule', 'build'];
    const outcome = await h.exec(`
      const names = ${JSON.stringify(names)};
      const calls = [];
      for (const attempt of [() => Deno.exit(1), () => new Deno.Command('id').outputSync(), () => Deno.run({ cmd: ['id'] })]) {
        try { attempt(); calls.push('ran'); } catch (error) { calls.push(error.name + ': ' + error.message); }
      }
      return { present: names.filter((name) => name in Deno), calls };`);
    expectResult(outcome, {
      present: [],
      calls: ['TypeError: Deno.exit is not a function', 'TypeError: Deno.Command is not a constructor', 'TypeError: Deno.run is not a function'],
    });
    await expectNextCallWorks(h);
  });

  it('Deno cannot be replaced or extended, and env.set / env.delete are NotSupported', async () => {
    const outcome = await h.exec(`
      'use strict';
      const attempts = [];
      for (const attempt of [() => { globalThis.Deno = {}; }, () => { Deno.exit = () => 0; }, () => { delete globalThis.Deno; }, () => { Deno.env.get = () => 'x'; },
        () => Deno.env.set('HIDDEN_KEY', 'x'), () => Deno.env.delete('HIDDEN_KEY')]) {
        try { attempt(); attempts.push('done'); } catch (error) { attempts.push(error.name + ': ' + error.message); }
      }
      return { attempts, readTextFile: typeof Deno.readTextFile, exit: typeof Deno.exit };`);
    expectResult(outcome, {
      attempts: [
        "TypeError: Cannot assign to read only property 'Deno' of object '#<Object>'",
        'TypeError: Cannot add property exit, object is not extensible',
        "TypeError: Cannot delete property 'Deno' of #<Object>",
        "TypeError: Cannot assign to read only property 'get' of object '#<Object>'",
        'NotSupported: Deno.env.set is not available inside a Paddock isolate.',
        'NotSupported: Deno.env.delete is not available inside a Paddock isolate.',
      ],
      readTextFile: 'function',
      exit: 'undefined',
    });
    await expectNextCallWorks(h);
  });

  it('offers no WebAssembly by any path (its memories live outside the heap limit)', async () => {
    const outcome = await h.exec(`
      return [typeof WebAssembly, 'WebAssembly' in globalThis, Function('return typeof WebAssembly')(), (0, eval)('typeof WebAssembly'),
        Reflect.ownKeys(globalThis).some((key) => String(key).toLowerCase().includes('wasm') || String(key).includes('WebAssembly'))];`);
    expectResult(outcome, ['undefined', false, 'undefined', 'undefined', false]);
    await expectNextCallWorks(h);
  });

  it('eval of huge code costs only the call: 2 MB evaluates, a deep nest is a RangeError, past heap/8 code generation is refused', async () => {
    expectResult(await h.exec(`return eval('1+'.repeat(1e6) + '1');`), 1_000_001);
    expectFailure(await h.exec(`return eval('['.repeat(1e5) + ']'.repeat(1e5));`), {
      kind: 'tool_error', name: 'RangeError', message: 'Maximum call stack size exceeded',
    });
    // isolated-vm refuses to compile a string longer than a eighth of the heap limit (32 MiB / 8 = 4 Mi characters).
    const refused = { kind: 'tool_error', name: 'EvalError', message: 'Code generation from strings disallowed for this context' } as const;
    expectFailure(await h.exec(`return eval('1+'.repeat(3e6) + '1');`), refused);
    expectFailure(await h.exec(`return new Function('x', 'return ' + 'x+'.repeat(3e6) + 'x')(1);`), refused);
    await expectNextCallWorks(h);
  });
});
