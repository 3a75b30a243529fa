/**
 * Pins: a hostname is resolved once per hop and the connection goes to the address that was
 * checked, whatever a second DNS answer would say (rebinding); the socket never resolves on its
 * own. Host header, TLS SNI and certificate checks keep using the hostname.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '../../../../sandbox/capabilities/net/fetch.ts';
import { PinViolation, createPinnedClient } from '../../../../sandbox/capabilities/net/pinned-client.ts';
import { TEST_CA, fetchOptions, get, guestErrorOf, startServer, text } from './helpers.ts';
import type { TestServer } from './helpers.ts';

let checked: TestServer;
let rebound: TestServer;
let tls: TestServer;

beforeAll(async () => {
  checked = await startServer((_request, response) => response.end('checked address'));
  // Same port on the other loopback: where a rebinding answer would send a second connection.
  rebound = await startServer((_request, response) => response.end('rebound address'), { host: '::1', port: checked.port });
  tls = await startServer((_request, response) => response.end('over tls'), { tls: true });
});

afterAll(async () => {
  await Promise.all([checked.close(), rebound.close(), tls.close()]);
});

/** A resolver that answers `first` once and `later` afterwards, counting its calls. */
function rebinding(first: string, later: string) {
  const calls: string[] = [];
  return {
    calls,
    resolveHost: (hostname: string) => {
      calls.push(hostname);
      return Promise.resolve([calls.length === 1 ? first : later]);
    },
  };
}

describe('DNS pinning', () => {
  it('connects to the checked address, resolving once, even when a second answer would differ', async () => {
    const dns = rebinding('127.0.0.1', '::1');
    // Both loopbacks are granted literally, so only pinning (not the address check) keeps the target fixed.
    const options = fetchOptions(['rebind.test', `127.0.0.1:${checked.port}`, `[::1]:${checked.port}`], {
      resolveHost: dns.resolveHost,
    });
    const before = rebound.requests.length;
    const result = await guardedFetch(get(`http://rebind.test:${checked.port}/`), options);
    expect(text(result.body)).toBe('checked address');
    expect(dns.calls).toEqual(['rebind.test']);
    expect(rebound.requests.length).toBe(before);
    // "rebind.test" does not exist in real DNS: had the socket resolved it itself, the fetch would have failed.
    expect(checked.requests.at(-1)?.headers.host).toBe(`rebind.test:${checked.port}`);
  });

  it('drops a socket whose peer is not one of the checked addresses', async () => {
    // An IP-literal origin bypasses the lookup, so this reaches the post-connect check directly.
    const client = createPinnedClient(new URL(rebound.origin), [{ address: '127.0.0.1', family: 4 }], { timeoutMs: 2_000 });
    const before = rebound.requests.length;
    try {
      await expect(client.request({ path: '/', method: 'GET' })).rejects.toBeInstanceOf(PinViolation);
    } finally {
      await client.destroy();
    }
    expect(rebound.requests.length).toBe(before);
  });

  it('resolves each redirect hop once and pins it too', async () => {
    const hops = await startServer((_request, response) => {
      response.writeHead(302, { location: `http://second.test:${checked.port}/` });
      response.end();
    });
    try {
      const answers: Record<string, string[]> = { 'first.test': ['127.0.0.1'], 'second.test': ['127.0.0.1'] };
      const asked: string[] = [];
      const options = fetchOptions(['first.test', 'second.test', '127.0.0.1'], {
        resolveHost: (hostname) => {
          asked.push(hostname);
          return Promise.resolve(answers[hostname] ?? []);
        },
      });
      const result = await guardedFetch(get(`http://first.test:${hops.port}/`), options);
      expect(text(result.body)).toBe('checked address');
      expect(asked).toEqual(['first.test', 'second.test']);
      expect(options.audit).toEqual([
        { target: `first.test:${hops.port}`, allowed: true },
        { target: `second.test:${checked.port}`, allowed: true },
      ]);
    } finally {
      await hops.close();
    }
  });
});

describe('https through the pinned connection', () => {
  const grant = () => ['paddock.test', 'other.test', `127.0.0.1:${tls.port}`];
  const toLoopback = () => Promise.resolve(['127.0.0.1']);

  it('verifies the certificate for the hostname and sends it as SNI', async () => {
    const options = fetchOptions(grant(), { resolveHost: toLoopback, caCertificates: [TEST_CA] });
    const result = await guardedFetch(get(`https://paddock.test:${tls.port}/secure`), options);
    expect(text(result.body)).toBe('over tls');
    expect(tls.requests.at(-1)).toMatchObject({ servername: 'paddock.test', headers: { host: `paddock.test:${tls.port}` } });
  });

  it('refuses a certificate from an unknown issuer, as Deno words it', async () => {
    const options = fetchOptions(grant(), { resolveHost: toLoopback });
    expect(await guestErrorOf(guardedFetch(get(`https://paddock.test:${tls.port}/`), options))).toEqual({
      name: 'TypeError',
      message: 'fetch failed',
      cause: { name: 'Error', message: `error sending request for url (https://paddock.test:${tls.port}/): client error (Connect): invalid peer certificate: UnknownIssuer` },
    });
  });

  it('refuses a certificate that does not name the host, even on the right address', async () => {
    const options = fetchOptions(grant(), { resolveHost: toLoopback, caCertificates: [TEST_CA] });
    expect(await guestErrorOf(guardedFetch(get(`https://other.test:${tls.port}/`), options))).toEqual({
      name: 'TypeError',
      message: 'fetch failed',
      cause: { name: 'Error', message: `error sending request for url (https://other.test:${tls.port}/): client error (Connect): invalid peer certificate: certificate not valid for name "other.test"` },
    });
  });
});
