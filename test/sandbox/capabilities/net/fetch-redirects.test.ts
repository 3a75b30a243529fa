/**
 * Pins: redirects are followed by hand, and every hop is a new request that is checked (grant,
 * address) and audited again; a hop outside the grant is refused before it is sent. `manual`
 * returns the 3xx as is, `error` fails as Deno does, hops are capped, methods are rewritten per the
 * Fetch standard, and credentials do not follow a redirect to another origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '../../../../sandbox/capabilities/net/fetch.ts';
import { fetchOptions, get, guestErrorOf, startServer, text } from './helpers.ts';
import type { Handler, TestServer } from './helpers.ts';

let origin: TestServer;
let other: TestServer;

const redirector: Handler = (request, response, body) => {
  const url = new URL(request.url ?? '/', 'http://x');
  if (url.pathname === '/chain') {
    const left = Number(url.searchParams.get('n'));
    response.writeHead(302, { location: left > 0 ? `/chain?n=${left - 1}` : '/done' });
    response.end('redirect body that is never read');
    return;
  }
  if (url.pathname === '/to') {
    response.writeHead(Number(url.searchParams.get('code') ?? 302), { location: url.searchParams.get('location') ?? '' });
    response.end();
    return;
  }
  if (url.pathname === '/no-location') {
    response.writeHead(302);
    response.end('no location');
    return;
  }
  response.writeHead(200, { 'content-type': 'text/plain' });
  response.end(`${url.pathname} ${body}`);
};

beforeAll(async () => {
  origin = await startServer(redirector);
  other = await startServer(redirector);
});

afterAll(async () => {
  await Promise.all([origin.close(), other.close()]);
});

const to = (location: string, code = 302) => `${origin.origin}/to?code=${code}&location=${encodeURIComponent(location)}`;

describe('redirects', () => {
  it('follows a chain within the grant, auditing every hop', async () => {
    const options = fetchOptions([`127.0.0.1:${origin.port}`]);
    const result = await guardedFetch(get(`${origin.origin}/chain?n=2`), options);
    expect(result).toMatchObject({ status: 200, redirected: true, url: `${origin.origin}/done` });
    expect(text(result.body)).toBe('/done ');
    expect(options.audit).toEqual(Array(4).fill({ target: `127.0.0.1:${origin.port}`, allowed: true }));
  });

  it('refuses a hop to a port the grant does not cover, without sending it', async () => {
    const options = fetchOptions([`127.0.0.1:${origin.port}`]);
    const before = other.requests.length;
    expect(await guestErrorOf(guardedFetch(get(to(`${other.origin}/stolen`)), options))).toEqual({
      name: 'NotCapable',
      message: `Requires net access to "127.0.0.1:${other.port}", run again with the --allow-net flag`,
    });
    expect(other.requests.length).toBe(before);
    expect(options.audit).toEqual([
      { target: `127.0.0.1:${origin.port}`, allowed: true },
      { target: `127.0.0.1:${other.port}`, allowed: false, reason: 'not granted' },
    ]);
  });

  it('refuses a hop to a granted name that resolves to a private address', async () => {
    const options = fetchOptions([`127.0.0.1:${origin.port}`, 'intranet.test'], {
      resolveHost: () => Promise.resolve(['192.168.1.10']),
    });
    expect(await guestErrorOf(guardedFetch(get(to('http://intranet.test/admin')), options))).toEqual({
      name: 'NotCapable',
      message: 'Requires net access to "192.168.1.10:80", run again with the --allow-net flag',
    });
    expect(options.audit.at(-1)).toEqual({
      target: 'intranet.test:80',
      allowed: false,
      reason: 'resolves to private address 192.168.1.10',
    });
  });

  it('refuses a hop to a blocked port and to a scheme other than http(s)', async () => {
    const options = fetchOptions([`127.0.0.1:${origin.port}`, '127.0.0.1']);
    expect(await guestErrorOf(guardedFetch(get(to('http://127.0.0.1:22/')), options))).toEqual({
      name: 'TypeError',
      message: 'Fetch failed: Requests to port 22 are blocked',
    });
    expect(await guestErrorOf(guardedFetch(get(to('file:///etc/passwd')), options))).toEqual({
      name: 'TypeError',
      message: 'Fetch failed: Can not redirect to a non HTTP(s) url',
    });
    expect(await guestErrorOf(guardedFetch(get(to('http://[bad/')), options))).toEqual({
      name: 'TypeError',
      message: `Invalid URL: 'http://[bad/' with base '${to('http://[bad/')}'`,
    });
  });

  it('stops at the redirect limit, like fetch with its 20', async () => {
    const options = fetchOptions([`127.0.0.1:${origin.port}`], { limits: { maxRedirects: 3 } });
    const before = origin.requests.length;
    expect(await guestErrorOf(guardedFetch(get(`${origin.origin}/chain?n=3`), options))).toEqual({
      name: 'TypeError',
      message: 'Fetch failed: Maximum number of redirects (3) reached',
    });
    expect(origin.requests.length - before).toBe(4); // the first request and 3 followed redirects
    const exact = await guardedFetch(get(`${origin.origin}/chain?n=2`), options);
    expect(exact.url).toBe(`${origin.origin}/done`);
  });

  it("returns the 3xx itself in 'manual' mode", async () => {
    const options = fetchOptions([`127.0.0.1:${origin.port}`]);
    const result = await guardedFetch(get(`${origin.origin}/chain?n=0`, { redirect: 'manual' }), options);
    expect(result).toMatchObject({ status: 302, redirected: false, url: `${origin.origin}/chain?n=0` });
    expect(result.headers).toContainEqual(['location', '/done']);
    expect(text(result.body)).toBe('redirect body that is never read');
    expect(options.audit).toHaveLength(1);
  });

  it("fails on a redirect in 'error' mode with Deno's message", async () => {
    const options = fetchOptions([`127.0.0.1:${origin.port}`]);
    expect(await guestErrorOf(guardedFetch(get(`${origin.origin}/chain?n=0`, { redirect: 'error' }), options))).toEqual({
      name: 'TypeError',
      message: "Fetch failed: Encountered redirect while redirect mode is set to 'error'",
    });
  });

  it('returns a redirect status without Location as the response', async () => {
    const result = await guardedFetch(get(`${origin.origin}/no-location`), fetchOptions([`127.0.0.1:${origin.port}`]));
    expect(result).toMatchObject({ status: 302, redirected: false });
    expect(text(result.body)).toBe('no location');
  });

  it.each([
    [303, 'PUT', 'GET', ''],
    [303, 'POST', 'GET', ''],
    [302, 'POST', 'GET', ''],
    [301, 'POST', 'GET', ''],
    [307, 'POST', 'POST', 'payload'],
    [308, 'PUT', 'PUT', 'payload'],
    [302, 'PUT', 'PUT', 'payload'],
  ])('%i after %s continues as %s', async (code, method, expectedMethod, expectedBody) => {
    const options = fetchOptions([`127.0.0.1:${origin.port}`]);
    const args = get(to('/landed', code), {
      method,
      body: new TextEncoder().encode('payload'),
      headers: [['content-type', 'text/plain'], ['x-keep', '1']],
    });
    const result = await guardedFetch(args, options);
    expect(text(result.body)).toBe(`/landed ${expectedBody}`);
    const landed = origin.requests.at(-1);
    expect(landed?.method).toBe(expectedMethod);
    expect(landed?.headers['x-keep']).toBe('1');
    expect(landed?.headers['content-type']).toBe(expectedMethod === 'GET' ? undefined : 'text/plain');
  });

  it('drops credentials on a cross-origin hop and keeps them on a same-origin one', async () => {
    const options = fetchOptions([`127.0.0.1:${origin.port}`, `127.0.0.1:${other.port}`]);
    const headers: [string, string][] = [['authorization', 'Bearer secret'], ['cookie', 'session=1'], ['x-trace', 't']];
    await guardedFetch(get(to('/same'), { headers }), options);
    expect(origin.requests.at(-1)?.headers).toMatchObject({ authorization: 'Bearer secret', cookie: 'session=1' });
    await guardedFetch(get(to(`${other.origin}/cross`), { headers }), options);
    const crossed = other.requests.at(-1);
    expect(crossed?.url).toBe('/cross');
    expect(crossed?.headers.authorization).toBeUndefined();
    expect(crossed?.headers.cookie).toBeUndefined();
    expect(crossed?.headers['x-trace']).toBe('t');
    expect(crossed?.headers.host).toBe(`127.0.0.1:${other.port}`);
  });

  it('keeps the fragment out of the response URL', async () => {
    const result = await guardedFetch(get(`${to('/frag')}#part`), fetchOptions([`127.0.0.1:${origin.port}`]));
    expect(result.url).toBe(`${origin.origin}/frag`);
  });
});
