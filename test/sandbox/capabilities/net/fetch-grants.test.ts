/**
 * Pins: a fetch reaches the network only when the grant covers host:port (default ports 80/443,
 * as Deno checks them), and only when every address the host resolves to is public or is itself
 * granted as a literal address. A hostname grant (`localhost`) is not a literal grant for the
 * loopback address it resolves to. Denials carry Deno's exact NotCapable message and are audited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '../../../../sandbox/capabilities/net/fetch.ts';
import { fetchOptions, get, guestErrorOf, startServer, text } from './helpers.ts';
import type { TestServer } from './helpers.ts';

let server: TestServer;
let v6server: TestServer;

beforeAll(async () => {
  server = await startServer((request, response, body) => {
    response.writeHead(200, { 'content-type': 'text/plain', 'x-reply': 'yes' });
    response.end(`${request.method ?? ''} ${request.url ?? ''} ${body}`);
  });
  v6server = await startServer((_request, response) => response.end('over ipv6'), { host: '::1' });
});

afterAll(async () => {
  await Promise.all([server.close(), v6server.close()]);
});

const notCapable = (target: string) => ({
  name: 'NotCapable',
  message: `Requires net access to "${target}", run again with the --allow-net flag`,
});

describe('net grant', () => {
  it('fetches from a granted literal address and audits the use', async () => {
    const options = fetchOptions([`127.0.0.1:${server.port}`]);
    const result = await guardedFetch(get(`${server.origin}/hello?x=1`), options);
    expect(result).toMatchObject({
      status: 200,
      statusText: 'OK',
      url: `${server.origin}/hello?x=1`,
      redirected: false,
    });
    expect(text(result.body)).toBe('GET /hello?x=1 ');
    expect(result.headers).toContainEqual(['x-reply', 'yes']);
    expect(result.body.constructor).toBe(Uint8Array); // never a Buffer view into the shared pool
    expect(options.audit).toEqual([{ target: `127.0.0.1:${server.port}`, allowed: true }]);
  });

  it('denies a host that is not granted, before any network use', async () => {
    const requestsBefore = server.requests.length;
    const options = fetchOptions(['example.com']);
    expect(await guestErrorOf(guardedFetch(get(`${server.origin}/`), options))).toEqual(
      notCapable(`127.0.0.1:${server.port}`),
    );
    expect(options.audit).toEqual([{ target: `127.0.0.1:${server.port}`, allowed: false, reason: 'not granted' }]);
    expect(server.requests.length).toBe(requestsBefore);
  });

  it('denies a granted host on another port', async () => {
    const options = fetchOptions([`127.0.0.1:${server.port + 1}`]);
    expect(await guestErrorOf(guardedFetch(get(`${server.origin}/`), options))).toEqual(
      notCapable(`127.0.0.1:${server.port}`),
    );
  });

  it('checks the default port of the scheme, as Deno does', async () => {
    expect(await guestErrorOf(guardedFetch(get('https://example.com/'), fetchOptions([])))).toEqual(
      notCapable('example.com:443'),
    );
    expect(await guestErrorOf(guardedFetch(get('http://Example.COM./x'), fetchOptions([])))).toEqual(
      notCapable('example.com:80'),
    );
  });

  it('checks the canonical address for decimal, hex and IPv4-mapped spellings of the host', async () => {
    const options = fetchOptions([`127.0.0.1:${server.port}`]);
    for (const host of ['0x7f.1', '2130706433', '127.1', '[::ffff:127.0.0.1]']) {
      const result = await guardedFetch(get(`http://${host}:${server.port}/spelled`), options);
      expect(text(result.body)).toBe('GET /spelled ');
    }
    expect(options.audit.map((entry) => entry.target)).toEqual(Array(4).fill(`127.0.0.1:${server.port}`));
    expect(await guestErrorOf(guardedFetch(get(`http://0177.0.0.1:${server.port}/`), fetchOptions(['localhost'])))).toEqual(
      notCapable(`127.0.0.1:${server.port}`),
    );
  });

  it('refuses a granted hostname that resolves to loopback (a hostname is not a literal grant)', async () => {
    const options = fetchOptions(['localhost']);
    const error = await guestErrorOf(guardedFetch(get(`http://localhost:${server.port}/`), options));
    expect(error.name).toBe('NotCapable');
    expect(error.message).toMatch(
      new RegExp(`^Requires net access to "(127\\.0\\.0\\.1|\\[::1\\]):${server.port}", run again with the --allow-net flag$`),
    );
    expect(options.audit).toEqual([
      { target: `localhost:${server.port}`, allowed: false, reason: expect.stringMatching(/^resolves to loopback address (127\.0\.0\.1|::1)$/) },
    ]);
  });

  it('follows a hostname to loopback when each address it resolves to is granted literally', async () => {
    const options = fetchOptions(['localhost', `127.0.0.1:${server.port}`, `[::1]:${server.port}`], {
      resolveHost: () => Promise.resolve(['::1', '127.0.0.1']), // ::1 first: nothing listens there on this port
    });
    const result = await guardedFetch(get(`http://localhost:${server.port}/both`), options);
    expect(text(result.body)).toBe('GET /both ');
    expect(server.requests.at(-1)?.headers.host).toBe(`localhost:${server.port}`);
  });

  it('refuses a hostname when any of its addresses is non-public and not granted', async () => {
    const options = fetchOptions(['mixed.test', `127.0.0.1:${server.port}`], {
      resolveHost: () => Promise.resolve(['127.0.0.1', '10.0.0.1']),
    });
    expect(await guestErrorOf(guardedFetch(get(`http://mixed.test:${server.port}/`), options))).toEqual(
      notCapable(`10.0.0.1:${server.port}`),
    );
    expect(options.audit).toEqual([
      { target: `mixed.test:${server.port}`, allowed: false, reason: 'resolves to private address 10.0.0.1' },
    ]);
  });

  it.each([
    ['10.1.2.3', '10.1.2.3', 'private address 10.1.2.3'],
    ['169.254.169.254', '169.254.169.254', 'cloud metadata address 169.254.169.254'],
    ['fd00:ec2::254', '[fd00:ec2::254]', 'cloud metadata address fd00:ec2::254'],
    ['100.64.0.1', '100.64.0.1', 'carrier-grade NAT address 100.64.0.1'],
    ['::ffff:192.168.0.1', '192.168.0.1', 'private address ::ffff:c0a8:1 (IPv4 192.168.0.1)'],
    ['0.0.0.0', '0.0.0.0', 'unspecified address 0.0.0.0'],
  ])('refuses a granted hostname resolving to %s', async (answer, named, reason) => {
    const options = fetchOptions(['internal.test'], { resolveHost: () => Promise.resolve([answer]) });
    expect(await guestErrorOf(guardedFetch(get('http://internal.test/'), options))).toEqual(notCapable(`${named}:80`));
    expect(options.audit).toEqual([{ target: 'internal.test:80', allowed: false, reason: `resolves to ${reason}` }]);
  });

  it('reaches an IPv6 loopback literal only when [::1] itself is granted', async () => {
    const options = fetchOptions([`127.0.0.1:${server.port}`, '[::1]']);
    const result = await guardedFetch(get(`${v6server.origin}/`), options);
    expect(text(result.body)).toBe('over ipv6');
    const denied = fetchOptions([`127.0.0.1:${server.port}`]);
    expect(await guestErrorOf(guardedFetch(get(`${v6server.origin}/`), denied))).toEqual(
      notCapable(`[::1]:${v6server.port}`),
    );
  });

  it('audits a literal non-public address that the grant check lets through but the literal check does not', async () => {
    // An authorize() that allows everything (like --allow-net) still does not open private space.
    const options = fetchOptions([], { authorize: () => undefined, literalAddressGranted: () => false });
    expect(await guestErrorOf(guardedFetch(get(`${server.origin}/`), options))).toEqual(
      notCapable(`127.0.0.1:${server.port}`),
    );
    expect(options.audit).toEqual([
      { target: `127.0.0.1:${server.port}`, allowed: false, reason: 'loopback address 127.0.0.1' },
    ]);
  });
});

describe('request validation', () => {
  it.each([
    ['ftp://example.com/x', "Url scheme 'ftp' not supported"],
    ['file:///etc/passwd', "Url scheme 'file' not supported"],
    ['ws://example.com/', "Url scheme 'ws' not supported"],
    ['not a url', "Invalid URL: 'not a url'"],
    ['http://example.com:99999/', "Invalid URL: 'http://example.com:99999/'"],
    ['http://127.0.0.1:6000/', 'Fetch failed: Requests to port 6000 are blocked'],
    ['http://example.com:0/', 'Fetch failed: Requests to port 0 are blocked'],
  ])('rejects %s with TypeError %j', async (url, message) => {
    const options = fetchOptions(['example.com', '127.0.0.1']);
    expect(await guestErrorOf(guardedFetch(get(url), options))).toEqual({ name: 'TypeError', message });
    expect(options.audit).toEqual([]);
  });

  it.each([
    [{ method: 'TRACE' }, 'Method is forbidden'],
    [{ method: 'connect' }, 'Method is forbidden'],
    [{ method: 'bad method' }, 'Method is not valid'],
    [{ method: 'GET', body: new Uint8Array([1]) }, 'Request with GET/HEAD method cannot have body'],
    [{ headers: [['bad name', 'v']] as [string, string][] }, 'Invalid header name: "bad name"'],
    [{ headers: [['x-a', 'a\r\nx-injected: 1']] as [string, string][] }, 'Invalid header value: "a\r\nx-injected: 1"'],
  ])('rejects %j before any network use', async (init, message) => {
    const options = fetchOptions([`127.0.0.1:${server.port}`]);
    expect(await guestErrorOf(guardedFetch(get(`${server.origin}/`, init), options))).toEqual({ name: 'TypeError', message });
    expect(options.audit).toEqual([]);
  });

  it('caps the request size', async () => {
    const options = fetchOptions([`127.0.0.1:${server.port}`], { limits: { maxRequestBytes: 1024 } });
    const body = new Uint8Array(2048); // + 65 bytes of default headers (accept, accept-language, user-agent, accept-encoding)
    expect(await guestErrorOf(guardedFetch(get(`${server.origin}/`, { method: 'POST', body }), options))).toEqual({
      name: 'TypeError',
      message: 'The request (headers and body) is 2113 bytes, more than the fetch request limit of 1024 bytes',
    });
  });

  it('sends the checked host as Host and drops framing and hop-by-hop headers the guest set', async () => {
    const options = fetchOptions([`127.0.0.1:${server.port}`]);
    const result = await guardedFetch(
      get(`${server.origin}/h`, {
        method: 'post',
        body: new TextEncoder().encode('payload'),
        headers: [
          ['Host', 'admin.internal'],
          ['Connection', 'close, x-api-key'],
          ['Transfer-Encoding', 'chunked'],
          ['Content-Length', '1'],
          ['Upgrade', 'h2c'],
          ['X-Api-Key', 'k'],
          ['User-Agent', 'tool/1'],
        ],
      }),
      options,
    );
    expect(text(result.body)).toBe('POST /h payload');
    const seen = server.requests.at(-1);
    expect(seen?.headers).toMatchObject({
      host: `127.0.0.1:${server.port}`,
      'content-length': '7',
      'x-api-key': 'k',
      'user-agent': 'tool/1',
      accept: '*/*',
      'accept-encoding': 'gzip, br',
    });
    expect(seen?.headers['transfer-encoding']).toBeUndefined();
    expect(seen?.headers.upgrade).toBeUndefined();
    expect(seen?.headers.connection ?? '').not.toContain('x-api-key');
    expect(seen?.rawHeaders.filter((name) => name.toLowerCase() === 'host')).toHaveLength(1);
  });

  it('sends URL credentials as Basic authorization, as Deno does', async () => {
    const options = fetchOptions([`127.0.0.1:${server.port}`]);
    await guardedFetch(get(`http://user:p%40ss@127.0.0.1:${server.port}/private`), options);
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Basic ${Buffer.from('user:p@ss').toString('base64')}`);
  });
});
