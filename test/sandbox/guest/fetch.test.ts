/**
 * Pins: fetch sends exactly what the host needs (URL, method, headers, body bytes, redirect mode)
 * and builds Responses from what it gets back; Request, Response and Headers follow the Fetch
 * standard with Deno 2's error messages; aborting a fetch cancels it on the host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchArgs, FetchResult } from '../../../sandbox/protocol.ts';
import { denoEvaluate } from './helpers/deno.ts';
import { createGuest, evaluate, HostFailure, type Guest } from './helpers/fake-host.ts';

let guest: Guest;
const seen: FetchArgs[] = [];

function reply(args: FetchArgs): FetchResult {
  seen.push(args);
  const url = new URL(args.url);
  if (url.pathname === '/redirected') {
    return { status: 200, statusText: 'OK', headers: [], url: 'https://final.example/', redirected: true, body: new TextEncoder().encode('moved') };
  }
  if (url.pathname === '/empty') return { status: 204, statusText: 'No Content', headers: [], url: args.url, redirected: false, body: new Uint8Array() };
  if (url.pathname === '/denied') throw new HostFailure('NotCapable', `Requires net access to "${url.host}", run again with the --allow-net flag`);
  if (url.pathname === '/broken') throw new HostFailure('TypeError', 'error sending request for url (https://x.example/broken): connection refused');
  const body = { method: args.method, headers: args.headers, body: args.body === null ? null : new TextDecoder().decode(args.body), redirect: args.redirect };
  return {
    status: 201, statusText: 'Created', url: args.url, redirected: false,
    headers: [['content-type', 'application/json'], ['set-cookie', 'a=1'], ['set-cookie', 'b=2'], ['x-multi', 'one'], ['x-multi', 'two']],
    body: new TextEncoder().encode(JSON.stringify(body)),
  };
}

beforeAll(async () => { guest = await createGuest({ async: { fetch: reply, sleep: () => new Promise(() => { /* never */ }) } }); });
afterAll(() => { guest.dispose(); });

describe('fetch over the bridge', () => {
  it('sends the method, normalized headers, body bytes and redirect mode', async () => {
    seen.length = 0;
    const result = await evaluate(guest, `
      const r = await fetch(new URL("https://api.example/items?q=a b"), {
        method: "post", headers: [["X-One", " 1 "], ["x-one", "2"]], body: new URLSearchParams({ k: "v w" }), redirect: "manual",
      });
      return [r.status, r.statusText, r.ok, r.url, r.redirected, r.type, await r.json()];`);
    expect(seen[0]).toEqual({
      url: 'https://api.example/items?q=a%20b', method: 'POST',
      headers: [['x-one', '1'], ['x-one', '2'], ['content-type', 'application/x-www-form-urlencoded;charset=UTF-8']],
      body: new TextEncoder().encode('k=v+w'), redirect: 'manual',
    });
    expect(result).toEqual([201, 'Created', true, 'https://api.example/items?q=a%20b', false, 'basic', {
      method: 'POST', body: 'k=v+w', redirect: 'manual',
      headers: [['x-one', '1'], ['x-one', '2'], ['content-type', 'application/x-www-form-urlencoded;charset=UTF-8']],
    }]);
  });

  it('reads bodies as text, bytes, arrayBuffer and a one-chunk stream, once', async () => {
    const result = await evaluate(guest, `
      const a = await fetch("https://api.example/a");
      const b = a.clone();
      const text = await a.text();
      let second; try { await a.text(); } catch (e) { second = e.constructor.name + ": " + e.message; }
      let cloneAfter; try { a.clone(); } catch (e) { cloneAfter = e.message; }
      const bytes = await b.bytes();
      const c = await fetch("https://api.example/c");
      const buffer = await c.arrayBuffer();
      const d = await fetch("https://api.example/d");
      let streamed = 0; for await (const chunk of d.body) streamed += chunk.length;
      return [JSON.parse(text).method, second, cloneAfter, bytes instanceof Uint8Array, bytes.length === text.length,
        buffer instanceof ArrayBuffer, buffer.byteLength === text.length, streamed === text.length, d.bodyUsed, a.bodyUsed];`);
    expect(result).toEqual(['GET', 'TypeError: Body already consumed', 'Body is unusable', true, true, true, true, true, true, true]);
  });

  it('exposes response headers sorted and combined, with set-cookie apart, and immutable', async () => {
    const result = await evaluate(guest, `
      const r = await fetch("https://api.example/h");
      let error; try { r.headers.set("x", "1"); } catch (e) { error = e.constructor.name; }
      return [[...r.headers], r.headers.get("x-multi"), r.headers.getSetCookie(), error];`);
    expect(result).toEqual([
      [['content-type', 'application/json'], ['set-cookie', 'a=1'], ['set-cookie', 'b=2'], ['x-multi', 'one, two']],
      'one, two', ['a=1', 'b=2'], 'TypeError',
    ]);
  });

  it('reports redirects, null-body statuses, data: URLs and unsupported schemes', async () => {
    const result = await evaluate(guest, `
      const moved = await fetch("https://api.example/redirected");
      const empty = await fetch("https://api.example/empty");
      const data = await fetch("data:text/plain;base64,aGVsbG8=");
      const plain = await fetch("data:,a%20b");
      let scheme; try { await fetch("ftp://x.example/"); } catch (e) { scheme = e.constructor.name + ": " + e.message; }
      return [moved.url, moved.redirected, empty.status, empty.body, await empty.text(), await data.text(), data.headers.get("content-type"),
        await plain.text(), plain.headers.get("content-type"), scheme];`);
    expect(result).toEqual([
      'https://final.example/', true, 204, null, '', 'hello', 'text/plain', 'a b', 'text/plain;charset=US-ASCII',
      "TypeError: Url scheme 'ftp' not supported",
    ]);
  });

  it('rejects with the host error rebuilt: NotCapable for a denial, TypeError for a network failure', async () => {
    const result = await evaluate(guest, `
      const out = [];
      for (const path of ["/denied", "/broken"]) {
        try { await fetch("https://blocked.example" + path); } catch (e) {
          out.push([e instanceof Deno.errors.NotCapable, e instanceof TypeError, e.name, e.message]);
        }
      }
      return out;`);
    expect(result).toEqual([
      [true, false, 'NotCapable', 'Requires net access to "blocked.example", run again with the --allow-net flag'],
      [false, true, 'TypeError', 'error sending request for url (https://x.example/broken): connection refused'],
    ]);
  });

  it('cancels the host request when its signal aborts, and rejects with the reason', async () => {
    const hanging = await createGuest({ async: { fetch: () => new Promise(() => { /* never answers */ }) } });
    try {
      const result = await evaluate(hanging, `
        const controller = new AbortController();
        const pending = fetch("https://slow.example/", { signal: controller.signal });
        await null;
        controller.abort();
        let first; try { await pending; } catch (e) { first = [e.name, e.message, e instanceof DOMException]; }
        let second; try { await fetch("https://slow.example/", { signal: AbortSignal.abort("why") }); } catch (e) { second = e; }
        return [first, second];`);
      expect(result).toEqual([['AbortError', 'The signal has been aborted', true], 'why']);
      expect(hanging.cancelled).toHaveLength(1);
      expect(hanging.requests.filter((request) => request.op === 'fetch')).toHaveLength(1);
    } finally {
      hanging.dispose();
    }
  });
});

describe('Request, Response and Headers, compared with Deno 2', () => {
  it('validate and construct the same way', async () => {
    const program = `
      const out = [];
      const attempt = (f) => { try { const v = f(); out.push(v === undefined ? null : v); } catch (e) { out.push([e.constructor.name, e.message]); } };
      attempt(() => new Response("x", { status: 99 }));
      attempt(() => new Response("x", { status: 600 }));
      attempt(() => new Response("body", { status: 204 }));
      attempt(() => new Response(null, { status: 204 }).status);
      attempt(() => new Headers({ "bad name": "x" }));
      attempt(() => new Headers({ a: "x\\ny" }));
      attempt(() => new Headers({ a: " trimmed\\t" }).get("a"));
      attempt(() => new Headers([["a"]]));
      attempt(() => new Request("/relative"));
      attempt(() => new Request("http://x.com", { method: "GET", body: "x" }));
      attempt(() => new Request("http://x.com", { method: "CONNECT" }));
      attempt(() => new Request("http://x.com", { method: "patch" }).method);
      attempt(() => new Request("http://x.com", { method: "delete" }).method);
      attempt(() => new Request("http://x.com", { method: "bad method" }));
      attempt(() => new Request("http://x.com/a?b#c").url);
      attempt(() => new Request(new Request("http://x.com", { method: "POST", body: "b", headers: { a: "1" } })).headers.get("content-type"));
      attempt(() => Response.json({ a: 1 }).headers.get("content-type"));
      attempt(() => Response.json({ a: 1 }, { headers: { "content-type": "application/vnd+json" } }).headers.get("content-type"));
      attempt(() => Response.redirect("http://x.com/", 307).headers.get("location"));
      attempt(() => Response.redirect("http://x.com/", 200));
      attempt(() => Response.error().type + Response.error().status);
      attempt(() => new Response(new Uint8Array([104, 105])).headers.get("content-type"));
      attempt(() => new Response("t").headers.get("content-type"));
      attempt(() => [new Response().status, new Response().statusText, new Response().ok, new Response().body, new Response().type]);
      attempt(() => [...new Headers({ b: "2", a: "1", A: "3" })]);
      attempt(() => { const h = new Headers(); h.append("Set-Cookie", "x"); h.append("set-cookie", "y"); return [h.get("set-cookie"), h.getSetCookie(), [...h]]; });
      attempt(() => { const h = new Headers({ a: "1" }); h.delete("A"); return h.has("a"); });
      const r = new Request("http://x.com", { method: "PUT", body: "payload" });
      out.push(await r.clone().text(), await r.text(), r.bodyUsed);
      out.push(await new Response(new URLSearchParams("a=1&b=2")).text(), await Response.json([1]).json());
      out.push(Object.prototype.toString.call(new Headers()), Object.prototype.toString.call(new Response()), String(new Request("http://x.com")));
      return out;`;
    const [ours, deno] = await Promise.all([evaluate(guest, program), denoEvaluate(program)]);
    expect(ours).toEqual(deno);
  });
});
