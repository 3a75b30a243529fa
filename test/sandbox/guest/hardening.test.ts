/**
 * Pins: the runtime script is snapshot-safe and defines only __paddock_boot; after boot no door
 * is reachable from user code (globals, any reachable object, stack-trace call sites, fn.caller);
 * and a tool that monkey-patches builtins cannot break fetch or console, nor see what flows
 * through the bridge.
 */
import ivm from 'isolated-vm';
import { afterEach, describe, expect, it } from 'vitest';
import { buildGuestRuntime } from '../../../sandbox/bundler/guest-runtime.ts';
import { createGuest, evaluate, runtimeSnapshot, type Guest } from './helpers/fake-host.ts';

let guest: Guest | undefined;
afterEach(() => { guest?.dispose(); guest = undefined; });

describe('the runtime script', () => {
  it('is one classic script that defines only a non-enumerable __paddock_boot', async () => {
    const code = await buildGuestRuntime();
    expect(code).not.toMatch(/^\s*(import|export)\s/m);
    expect(await buildGuestRuntime()).toBe(code); // built once, cached
    const isolate = new ivm.Isolate({ memoryLimit: 32 });
    try {
      const context = await isolate.createContext();
      const before = await context.eval('JSON.stringify(Reflect.ownKeys(globalThis).map(String))', { copy: true }) as string;
      await context.eval(code);
      const after = await context.eval('JSON.stringify(Reflect.ownKeys(globalThis).map(String))', { copy: true }) as string;
      const added = (JSON.parse(after) as string[]).filter((key) => !(JSON.parse(before) as string[]).includes(key));
      expect(added).toEqual(['__paddock_boot']);
      expect(await context.eval('Object.getOwnPropertyDescriptor(globalThis, "__paddock_boot").enumerable')).toBe(false);
    } finally {
      isolate.dispose();
    }
  });

  it('can be snapshotted, and contexts of the snapshot boot and run independently', async () => {
    const snapshot = await runtimeSnapshot();
    const first = await createGuest({ snapshot });
    const second = await createGuest({ snapshot });
    try {
      await evaluate(first, 'globalThis.marker = 1; console.log("first")');
      expect(await evaluate(second, 'return [typeof marker, typeof fetch, typeof Deno.readTextFile, crypto.randomUUID().length]')).toEqual(['undefined', 'function', 'function', 36]);
      expect(first.logs).toEqual([{ level: 'info', text: 'first' }]);
      expect(second.logs).toEqual([]);
    } finally {
      first.dispose();
      second.dispose();
    }
  });
});

describe('doors after boot', () => {
  it('leaves no __paddock_ global and no host-facing function for user code', async () => {
    guest = await createGuest();
    const names = await evaluate(guest, `return Reflect.ownKeys(globalThis).map(String).filter((k) => k.startsWith("__paddock") && k !== "__paddock_module")`);
    expect(names).toEqual([]);
    expect(await evaluate(guest, 'return [typeof __paddock_request, typeof __paddock_call, typeof __paddock_cancel, typeof __paddock_boot, typeof __paddock_settle]'))
      .toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined']);
  });

  it('makes no door reachable from any object graph reachable from globalThis, nor named in any reachable source', async () => {
    // The test host stashes the door functions under a symbol before boot (boot deletes only the globals).
    const isolate = new ivm.Isolate({ memoryLimit: 64, snapshot: await runtimeSnapshot() });
    try {
      const context = await isolate.createContext();
      for (const name of ['__paddock_request', '__paddock_call', '__paddock_cancel']) await context.global.set(name, new ivm.Callback(() => 0));
      await context.eval(`Object.defineProperty(globalThis, Symbol.for('test.doors'), { value: [__paddock_request, __paddock_call, __paddock_cancel], configurable: true });`);
      await context.eval('__paddock_boot()');
      const found = await context.eval(`
        const doors = globalThis[Symbol.for('test.doors')];
        delete globalThis[Symbol.for('test.doors')];
        const seen = new Set();
        const queue = [globalThis];
        let hits = 0;
        let sourcesNamingDoors = 0;
        const toSource = Function.prototype.toString;
        while (queue.length > 0) {
          const value = queue.pop();
          if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
          seen.add(value);
          if (doors.includes(value)) hits++;
          if (typeof value === 'function' && /__paddock_(request|call|cancel|settle)/.test(toSource.call(value))) sourcesNamingDoors++;
          queue.push(Object.getPrototypeOf(value));
          for (const key of Reflect.ownKeys(value)) {
            const d = Object.getOwnPropertyDescriptor(value, key);
            for (const v of [d.value, d.get, d.set]) queue.push(v);
            if (d.get) { try { queue.push(d.get.call(value)); } catch {} }
          }
        }
        JSON.stringify({ hits, sourcesNamingDoors, visited: seen.size });`, { copy: true }) as string;
      const { hits, sourcesNamingDoors, visited } = JSON.parse(found) as { hits: number; sourcesNamingDoors: number; visited: number };
      expect(hits).toBe(0);
      expect(sourcesNamingDoors).toBe(0);
      expect(visited).toBeGreaterThan(500);
    } finally {
      isolate.dispose();
    }
  });

  it('hides runtime functions from Error.prepareStackTrace call sites and from fn.caller', async () => {
    guest = await createGuest();
    const result = await evaluate(guest, `
      const functions = [];
      Error.prepareStackTrace = (error, sites) => { for (const site of sites) functions.push(site.getFunction()); return 'patched'; };
      try { new Request('not a url'); } catch (e) { void e.stack; }
      try { new TextDecoder().decode('x'); } catch (e) { void e.stack; }
      delete Error.prepareStackTrace;
      function sloppyListener() { return sloppyListener.caller; }
      let caller = 'unset';
      const target = new EventTarget();
      target.addEventListener('x', function () { caller = sloppyListener(); });
      target.dispatchEvent(new Event('x'));
      let callerError = 'none';
      const listener = function () { try { caller = listener.caller; } catch (e) { callerError = e.name; } };
      target.addEventListener('y', listener);
      target.dispatchEvent(new Event('y'));
      return [functions.filter((f) => f !== undefined && f !== sloppyListener).length, caller, callerError];`);
    expect(result).toEqual([0, null, 'none']);
  });
});

describe('monkey-patched builtins', () => {
  it('do not break or observe fetch, console, timers and the bridge', async () => {
    guest = await createGuest({
      async: {
        fetch: (args) => ({
          status: 200, statusText: 'OK', url: args.url, redirected: false,
          headers: [['content-type', 'application/json']], body: new TextEncoder().encode(JSON.stringify({ echo: args.method })),
        }),
      },
    });
    const result = await evaluate(guest, `
      let calls = 0;
      const OriginalError = Error;
      const spy = (name) => function () { calls++; throw new OriginalError("patched " + name); };
      const fetchRef = fetch, URLRef = URL, setTimeoutRef = setTimeout, JSONRef = JSON;
      const ArrayRef = Array;
      Array.prototype.push = spy("push"); Array.prototype.map = spy("map"); Array.prototype.forEach = spy("forEach");
      Array.prototype.join = spy("join"); Array.prototype.slice = spy("slice"); Array.prototype.splice = spy("splice");
      Array.prototype.indexOf = spy("indexOf"); Array.prototype.includes = spy("includes");
      Array.prototype[Symbol.iterator] = spy("iterator");
      Object.defineProperty(Array, Symbol.species, { get: spy("species") });
      Promise.prototype.then = spy("then");
      Function.prototype.call = spy("call"); Function.prototype.apply = spy("apply"); Function.prototype.bind = spy("bind");
      Map.prototype.get = spy("Map.get"); Map.prototype.set = spy("Map.set"); Map.prototype.delete = spy("Map.delete");
      String.prototype.slice = spy("String.slice"); String.prototype.indexOf = spy("String.indexOf");
      String.prototype.toLowerCase = spy("toLowerCase"); String.prototype.charCodeAt = spy("charCodeAt");
      Uint8Array.prototype.slice = spy("u8.slice"); Uint8Array.prototype.subarray = spy("u8.subarray");
      Object.keys = spy("Object.keys"); Object.defineProperty = spy("Object.defineProperty"); Reflect.apply = spy("Reflect.apply");
      globalThis.JSON = { parse: spy("JSON.parse"), stringify: spy("JSON.stringify") };
      globalThis.Uint8Array = spy("Uint8Array ctor"); globalThis.Error = spy("Error ctor"); globalThis.Map = spy("Map ctor");

      const response = await fetchRef("https://api.example/items?q=1", { method: "POST", body: "hello", headers: { "X-Test": "1" } });
      const body = await response.json();
      console.log("logged", { body }, [1, 2]);
      await new Promise((resolve) => setTimeoutRef(resolve, 1));
      const u = new URLRef("https://münchen.example/a/../b?x=1#y");
      const out = { status: response.status, body, type: response.headers.get("content-type"), href: u.href, calls };
      Object.defineProperty = Reflect.defineProperty;
      return JSONRef.stringify(out);`) as string;
    expect(JSON.parse(result)).toEqual({
      status: 200, body: { echo: 'POST' }, type: 'application/json', href: 'https://xn--mnchen-3ya.example/b?x=1#y', calls: 0,
    });
    expect(guest.logs).toEqual([{ level: 'info', text: 'logged { body: { echo: "POST" } } [ 1, 2 ]' }]);
    expect(guest.requests.find((request) => request.op === 'fetch')?.args).toMatchObject({
      url: 'https://api.example/items?q=1', method: 'POST', headers: [['x-test', '1'], ['content-type', 'text/plain;charset=UTF-8']],
    });
  });
});
