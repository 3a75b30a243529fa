/**
 * Pins: structuredClone, crypto, AbortController/AbortSignal, EventTarget, timers and
 * queueMicrotask behave as on the Web (and as in Deno 2 where the errors are subtle), with
 * timers and randomness served by the host's ops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { denoEvaluate } from './helpers/deno.ts';
import { createGuest, evaluate, type Guest } from './helpers/fake-host.ts';

let guest: Guest;
beforeAll(async () => { guest = await createGuest(); });
afterAll(() => { guest.dispose(); });

describe('structuredClone', () => {
  it('clones plain data, Dates, Maps, Sets, RegExps, buffers, typed arrays, errors and cycles', async () => {
    const result = await evaluate(guest, `
      const buffer = new Uint8Array([1, 2, 3, 4]).buffer;
      const source = { n: 1, s: "x", d: new Date(5), m: new Map([[1, { a: 1 }]]), set: new Set(["a"]), r: /x/gi,
        view: new Uint16Array(buffer, 2, 1), same: null, err: new RangeError("bad", { cause: 1 }), boxed: new Number(3), big: 5n, arr: [1, , 3] };
      source.same = source.view; source.self = source;
      const copy = structuredClone(source);
      return [copy !== source, copy.self === copy, copy.d instanceof Date && copy.d.getTime(), copy.m.get(1).a, copy.set.has("a"),
        copy.r.source + copy.r.flags, copy.view instanceof Uint16Array, copy.view[0], copy.view.buffer !== buffer, copy.view.buffer.byteLength,
        copy.same === copy.view, copy.err instanceof RangeError, copy.err.message, copy.err.cause, typeof copy.boxed, copy.big === 5n, 1 in copy.arr, copy.arr.length];`);
    expect(result).toEqual([true, true, 5, 1, true, 'xgi', true, 1027, true, 4, true, true, 'bad', 1, 'object', true, false, 3]);
  });

  it('throws DataCloneError as Deno does for functions, symbols and platform objects', async () => {
    const program = `
      const out = [];
      for (const value of [() => 1, { a: Symbol("x") }, Promise.resolve(), new WeakMap()]) {
        try { structuredClone(value); out.push("cloned"); } catch (e) { out.push([e.constructor.name, e.name, e.message, e.code]); }
      }
      return out;`;
    const [ours, deno] = await Promise.all([evaluate(guest, program), denoEvaluate(program)]);
    expect(ours).toEqual(deno);
  });
});

describe('crypto', () => {
  it('fills integer typed arrays from the host randomBytes op and formats v4 UUIDs', async () => {
    const result = await evaluate(guest, `
      const bytes = crypto.getRandomValues(new Uint8Array(4));
      const words = crypto.getRandomValues(new Uint16Array(2));
      const uuid = crypto.randomUUID();
      return [Array.from(bytes), words.length, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(uuid), crypto instanceof Crypto];`);
    expect(result).toEqual([[11, 48, 85, 122], 2, true, true]);
  });

  it('rejects what Deno rejects, with the same errors', async () => {
    const program = `
      const out = [];
      for (const make of [() => new Uint8Array(65537), () => new Float32Array(2), () => new ArrayBuffer(2), () => new DataView(new ArrayBuffer(2))]) {
        try { crypto.getRandomValues(make()); out.push("ok"); } catch (e) { out.push([e.name, e.message, e.code, e instanceof DOMException]); }
      }
      out.push(crypto.getRandomValues(new Uint8Array(65536)).length);
      return out;`;
    const [ours, deno] = await Promise.all([evaluate(guest, program), denoEvaluate(program)]);
    expect(ours).toEqual(deno);
  });
});

describe('AbortController, AbortSignal and events', () => {
  it('behaves as in Deno 2', async () => {
    const program = `
      const out = [];
      const c = new AbortController();
      out.push(c.signal.aborted, c.signal.reason === undefined);
      c.signal.onabort = (e) => out.push("onabort:" + e.type + ":" + (e.target === c.signal));
      c.signal.addEventListener("abort", () => out.push("listener"), { once: true });
      c.abort();
      c.abort("again");
      out.push(c.signal.aborted, String(c.signal.reason), c.signal.reason.code);
      try { c.signal.throwIfAborted(); } catch (e) { out.push("thrown:" + e.name); }
      try { new AbortSignal(); } catch (e) { out.push(e.constructor.name); }
      const custom = AbortSignal.abort(42); out.push(custom.reason);
      const a = new AbortController(), b = new AbortController();
      const any = AbortSignal.any([a.signal, b.signal]);
      any.addEventListener("abort", () => out.push("any:" + any.reason));
      b.abort("b first"); a.abort("a second");
      out.push(AbortSignal.any([AbortSignal.abort("pre")]).reason);
      const t = AbortSignal.timeout(5);
      await new Promise((resolve) => t.addEventListener("abort", resolve));
      out.push(t.reason.name, t.reason.message, t.reason instanceof DOMException);
      const target = new EventTarget();
      const order = [];
      const handler = { handleEvent(e) { order.push("object:" + e.type); } };
      target.addEventListener("ping", (e) => { order.push("first"); e.stopImmediatePropagation(); });
      target.addEventListener("ping", () => order.push("never"));
      target.addEventListener("pong", handler);
      target.addEventListener("pong", handler);
      const controller = new AbortController();
      target.addEventListener("pong", () => order.push("removed by signal"), { signal: controller.signal });
      controller.abort();
      target.dispatchEvent(new Event("ping"));
      const cancelable = new Event("pong", { cancelable: true });
      target.addEventListener("pong", (e) => e.preventDefault());
      out.push(target.dispatchEvent(cancelable), cancelable.defaultPrevented, order);
      const custom2 = new CustomEvent("c", { detail: { x: 1 } }); out.push(custom2.detail.x, custom2 instanceof Event);
      try { new Event(); } catch (e) { out.push(e.constructor.name); }
      return out;`;
    const [ours, deno] = await Promise.all([evaluate(guest, program), denoEvaluate(program)]);
    expect(ours).toEqual(deno);
  });
});

describe('timers', () => {
  it('orders timeouts, intervals and microtasks, and clears them', async () => {
    const result = await evaluate(guest, `
      const out = [];
      queueMicrotask(() => out.push("micro"));
      setTimeout((a, b) => out.push("t20:" + a + b), 20, "x", "y");
      setTimeout(() => out.push("t0"), 0);
      const cleared = setTimeout(() => out.push("cleared"), 5);
      clearTimeout(cleared);
      let ticks = 0;
      const id = setInterval(() => { out.push("tick" + ++ticks); if (ticks === 3) clearInterval(id); }, 1);
      await new Promise((resolve) => setTimeout(resolve, 40));
      const numeric = setTimeout(() => out.push("cleared by number"), 1);
      clearTimeout(+numeric);
      const refreshed = setTimeout(() => out.push("refreshed"), 1).unref();
      refreshed.refresh();
      await new Promise((resolve) => setTimeout(resolve, 10));
      return [out, typeof id, id.constructor.name, Number(id) > 0, refreshed.hasRef()];`);
    expect(result).toEqual([['micro', 't0', 'tick1', 'tick2', 'tick3', 't20:xy', 'refreshed'], 'object', 'Timeout', true, false]);
  });

  it('asks the host to sleep, and cancels the sleep of a cleared timer', async () => {
    const local = await createGuest();
    try {
      await evaluate(local, `const id = setTimeout(() => {}, 1000); clearTimeout(id); await new Promise((r) => setTimeout(r, 1));`);
      expect(local.requests.filter((request) => request.op === 'sleep').map((request) => request.args)).toEqual([{ ms: 1000 }, { ms: 1 }]);
      expect(local.cancelled).toEqual([1]);
    } finally {
      local.dispose();
    }
  });
});
