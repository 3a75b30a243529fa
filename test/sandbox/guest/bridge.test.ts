/**
 * Pins: how host outcomes become guest values and errors. Only a vetted name and the message
 * cross; unknown names become plain Errors; a request settles exactly once (later or unknown
 * settles are ignored); a door that throws yields an Error with the message only, no host stack.
 */
import ivm from 'isolated-vm';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuest, evaluate, HostFailure, runtimeSnapshot, type Guest } from './helpers/fake-host.ts';

let guest: Guest | undefined;
afterEach(() => { guest?.dispose(); guest = undefined; });

describe('error rebuilding', () => {
  it('maps each host error name onto the matching guest class', async () => {
    const failures: Record<string, string> = {
      '/a': 'AbortError', '/b': 'RangeError', '/c': 'TypeError', '/d': 'SomethingUnknown', '/e': 'Http', '/f': 'TimedOut', '/g': 'Error',
    };
    guest = await createGuest({ async: { readFile: ({ path }) => { throw new HostFailure(failures[path] ?? 'Error', `failed ${path}`); } } });
    const result = await evaluate(guest, `
      const out = [];
      for (const path of ["/a", "/b", "/c", "/d", "/e", "/f", "/g"]) {
        try { await Deno.readFile(path); } catch (e) {
          out.push([e.constructor.name, e.name, e.message, e instanceof DOMException, e instanceof Error,
            e.name in Deno.errors ? e instanceof Deno.errors[e.name] : null]);
        }
      }
      return out;`);
    expect(result).toEqual([
      ['DOMException', 'AbortError', 'failed /a', true, true, null],
      ['RangeError', 'RangeError', 'failed /b', false, true, null],
      ['TypeError', 'TypeError', 'failed /c', false, true, null],
      ['Error', 'Error', 'failed /d', false, true, null],
      ['Http', 'Http', 'failed /e', false, true, true],
      ['TimedOut', 'TimedOut', 'failed /f', false, true, true],
      ['Error', 'Error', 'failed /g', false, true, null],
    ]);
  });
});

describe('settling', () => {
  it('settles a request once; repeated, unknown and malformed settles do no harm; a throwing door keeps only its message', async () => {
    const isolate = new ivm.Isolate({ memoryLimit: 64, snapshot: await runtimeSnapshot() });
    try {
      const context = await isolate.createContext();
      const ids: number[] = [];
      await context.global.set('__paddock_request', new ivm.Callback(() => { ids.push(ids.length + 1); return ids.length; }));
      await context.global.set('__paddock_call', new ivm.Callback(() => { throw new Error('secret host path /srv/x'); }));
      await context.global.set('__paddock_cancel', new ivm.Callback(() => undefined));
      await context.eval('__paddock_boot()');
      const settle: ivm.Reference = await context.global.get('__paddock_settle', { reference: true });
      const invoke: ivm.Reference = await context.global.get('__paddock_invoke', { reference: true });
      await context.eval(`var __paddock_module = { default: async () => {
        const first = Deno.readFile("/one").then((v) => ["ok", Array.from(v)], (e) => ["err", e.message]);
        const second = Deno.readFile("/two").then((v) => ["ok", v], (e) => ["err", e.name, e.message]);
        let sync; try { Deno.cwd(); } catch (e) { sync = [e.constructor.name, e.message, /bridge[.]test|node_modules|node:/.test(String(e.stack))]; }
        return [await first, await second, sync];
      } };`);
      const done = invoke.apply(undefined, [{ kind: 'exec' }], { arguments: { copy: true }, result: { promise: true, copy: true } });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const opts = { arguments: { copy: true as const } };
      await settle.apply(undefined, [99, { ok: true, value: 'unknown id' }], opts);
      await settle.apply(undefined, [1, { ok: true, value: new Uint8Array([7]) }], opts);
      await settle.apply(undefined, [1, { ok: false, error: { name: 'Error', message: 'too late' } }], opts);
      await settle.apply(undefined, [2, { nonsense: true }], opts);
      expect(await done).toEqual({
        result: [['ok', [7]], ['err', 'Error', 'The host returned a malformed outcome.'], ['Error', 'secret host path /srv/x', false]],
      });
    } finally {
      isolate.dispose();
    }
  });
});
