/**
 * Pins: a fetch never holds more than the body cap, never outlives its time limit, and stops
 * within milliseconds of an abort; each of these closes the socket. Failures reach the guest as
 * GuestErrors shaped like Deno's fetch errors, never as raw undici/Node errors.
 */
import type { ServerResponse } from 'node:http';
import { constants } from 'node:os';
import { performance } from 'node:perf_hooks';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '../../../../sandbox/capabilities/net/fetch.ts';
import { closedPort, fetchOptions, socketClosed, get, guestErrorOf, startServer, text } from './helpers.ts';
import type { TestServer } from './helpers.ts';

const CAP = 64 * 1024;
let server: TestServer;
/** Bytes the endless stream managed to hand to its socket before the client went away. */
const streamed: number[] = [];

function stream(response: ServerResponse, status = 200): void {
  const chunk = Buffer.alloc(16 * 1024, 'x');
  let written = 0;
  const pump = () => {
    while (!response.destroyed) {
      written += chunk.byteLength;
      if (!response.write(chunk)) {
        response.once('drain', pump);
        return;
      }
    }
  };
  response.on('error', () => undefined); // the client resetting the connection is the expected end
  response.on('close', () => streamed.push(written));
  response.writeHead(status, { 'content-type': 'application/octet-stream' });
  pump();
}

beforeAll(async () => {
  server = await startServer((request, response) => {
    switch (request.url) {
      case '/endless':
        stream(response);
        return;
      case '/endless-redirect':
        response.setHeader('location', '/after-endless-redirect');
        stream(response, 302);
        return;
      case '/declared-huge':
        response.writeHead(200, { 'content-length': String(100 * 1024 * 1024) });
        response.write('a little'); // and then nothing: the declared length alone must fail it
        return;
      case '/bomb':
        response.writeHead(200, { 'content-encoding': 'gzip' });
        response.end(gzipSync(Buffer.alloc(16 * 1024 * 1024)));
        return;
      case '/gzip':
        response.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
        response.end(gzipSync('hello gzip'));
        return;
      case '/deflate':
        response.writeHead(200, { 'content-encoding': 'deflate' });
        response.end(deflateSync('left as sent'));
        return;
      case '/br':
        response.writeHead(200, { 'content-encoding': 'br' });
        response.end(brotliCompressSync('hello brotli'));
        return;
      case '/bad-gzip':
        response.writeHead(200, { 'content-encoding': 'gzip' });
        response.end('this is not gzip');
        return;
      case '/hang':
        return; // never answers
      case '/stall-body':
        response.writeHead(200, { 'content-length': '100' });
        response.write('partial');
        return;
      case '/cut-body':
        response.writeHead(200, { 'content-length': '100' });
        response.write('partial', () => response.socket?.destroy());
        return;
      case '/hang-up':
        request.socket.destroy();
        return;
      default:
        response.end('ok');
    }
  });
});

afterAll(async () => {
  await server.close();
});

const grant = () => [`127.0.0.1:${server.port}`];

describe('response body cap', () => {
  it('stops reading an endless body at the cap, closes the socket and returns quickly', async () => {
    const arrived = server.nextRequest();
    const started = performance.now();
    const error = await guestErrorOf(guardedFetch(get(`${server.origin}/endless`), fetchOptions(grant(), { limits: { maxResponseBytes: CAP } })));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(error).toEqual({
      name: 'TypeError',
      message: `error reading a body from connection: the response body of ${server.origin}/endless exceeded the fetch body limit of ${CAP} bytes; the connection was closed`,
    });
    await socketClosed((await arrived).socket);
    await expect.poll(() => streamed.length).toBeGreaterThanOrEqual(1);
    expect(streamed[0]).toBeLessThan(64 * 1024 * 1024); // bounded by socket buffers, not by the server's patience
  });

  it('never reads the body of a redirect it follows, however long it is', async () => {
    const arrived = server.nextRequest();
    const result = await guardedFetch(get(`${server.origin}/endless-redirect`), fetchOptions(grant(), { limits: { maxResponseBytes: CAP } }));
    expect(result).toMatchObject({ status: 200, redirected: true, url: `${server.origin}/after-endless-redirect` });
    await socketClosed((await arrived).socket);
  });

  it('fails on a declared Content-Length over the cap without waiting for the bytes', async () => {
    const arrived = server.nextRequest();
    const error = await guestErrorOf(
      guardedFetch(get(`${server.origin}/declared-huge`), fetchOptions(grant(), { limits: { maxResponseBytes: CAP, timeoutMs: 10_000 } })),
    );
    expect(error.message).toContain(`exceeded the fetch body limit of ${CAP} bytes`);
    await socketClosed((await arrived).socket);
  });

  it('counts decoded bytes, so a small gzip bomb is stopped at the cap', async () => {
    const error = await guestErrorOf(guardedFetch(get(`${server.origin}/bomb`), fetchOptions(grant(), { limits: { maxResponseBytes: CAP } })));
    expect(error.message).toContain(`exceeded the fetch body limit of ${CAP} bytes`);
  });

  it('decodes gzip and br bodies (not deflate) as Deno does, keeping the headers as sent', async () => {
    const gzip = await guardedFetch(get(`${server.origin}/gzip`), fetchOptions(grant()));
    expect(text(gzip.body)).toBe('hello gzip');
    expect(gzip.headers).toContainEqual(['content-encoding', 'gzip']);
    const br = await guardedFetch(get(`${server.origin}/br`), fetchOptions(grant()));
    expect(text(br.body)).toBe('hello brotli');
    const deflate = await guardedFetch(get(`${server.origin}/deflate`), fetchOptions(grant()));
    expect(Buffer.from(deflate.body)).toEqual(deflateSync('left as sent')); // Deno 2 does not decode deflate

  });

  it('reports a body that does not decode', async () => {
    expect(await guestErrorOf(guardedFetch(get(`${server.origin}/bad-gzip`), fetchOptions(grant())))).toEqual({
      name: 'TypeError',
      message: 'error decoding response body',
    });
  });
});

describe('time limit and abort', () => {
  it('times out a server that never answers and closes the socket', async () => {
    const arrived = server.nextRequest();
    const started = performance.now();
    const error = await guestErrorOf(guardedFetch(get(`${server.origin}/hang`), fetchOptions(grant(), { limits: { timeoutMs: 150 } })));
    const elapsed = performance.now() - started;
    expect(error).toEqual({
      name: 'TypeError',
      message: 'fetch failed',
      cause: { name: 'Error', message: `error sending request for url (${server.origin}/hang): operation timed out (the fetch time limit is 150 ms)` },
    });
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(1_500);
    await socketClosed((await arrived).socket);
  });

  it('times out a body that stalls halfway', async () => {
    const error = await guestErrorOf(guardedFetch(get(`${server.origin}/stall-body`), fetchOptions(grant(), { limits: { timeoutMs: 150 } })));
    expect(error.cause?.message).toBe(`error sending request for url (${server.origin}/stall-body): operation timed out (the fetch time limit is 150 ms)`);
  });

  it('aborts within 100 ms while waiting for the response, closing the socket', async () => {
    const controller = new AbortController();
    const arrived = server.nextRequest();
    const pending = guestErrorOf(guardedFetch(get(`${server.origin}/hang`), fetchOptions(grant(), { signal: controller.signal })));
    const request = await arrived;
    const started = performance.now();
    controller.abort();
    expect(await pending).toEqual({ name: 'AbortError', message: 'The signal has been aborted' });
    expect(performance.now() - started).toBeLessThan(100);
    await socketClosed(request.socket);
  });

  it('aborts within 100 ms while the body is streaming', async () => {
    const controller = new AbortController();
    const arrived = server.nextRequest();
    const pending = guestErrorOf(guardedFetch(get(`${server.origin}/stall-body`), fetchOptions(grant(), { signal: controller.signal })));
    const request = await arrived;
    const started = performance.now();
    controller.abort();
    expect((await pending).name).toBe('AbortError');
    expect(performance.now() - started).toBeLessThan(100);
    await socketClosed(request.socket);
  });

  it('aborts a DNS lookup that never answers, and times it out', async () => {
    const neverAnswers = () => new Promise<readonly string[]>(() => undefined);
    const controller = new AbortController();
    const pending = guestErrorOf(guardedFetch(get('http://slow-dns.test/'), fetchOptions(['slow-dns.test'], { signal: controller.signal, resolveHost: neverAnswers })));
    const started = performance.now();
    controller.abort();
    expect((await pending).name).toBe('AbortError');
    expect(performance.now() - started).toBeLessThan(100);
    const timedOut = await guestErrorOf(guardedFetch(get('http://slow-dns.test/'), fetchOptions(['slow-dns.test'], { resolveHost: neverAnswers, limits: { timeoutMs: 100 } })));
    expect(timedOut.cause?.message).toBe('error sending request for url (http://slow-dns.test/): operation timed out (the fetch time limit is 100 ms)');
  });

  it('fails at once when the signal is already aborted, without touching the network', async () => {
    const options = fetchOptions(grant(), { signal: AbortSignal.abort() });
    expect(await guestErrorOf(guardedFetch(get(`${server.origin}/`), options))).toEqual({ name: 'AbortError', message: 'The signal has been aborted' });
    expect(options.audit).toEqual([]);
  });
});

describe('network failures', () => {
  it("reports a refused connection as Deno does (TypeError, 'tcp connect error')", async () => {
    const port = await closedPort();
    expect(await guestErrorOf(guardedFetch(get(`http://127.0.0.1:${port}/`), fetchOptions([`127.0.0.1:${port}`])))).toEqual({
      name: 'TypeError',
      message: 'fetch failed',
      cause: { name: 'Error', message: `error sending request for url (http://127.0.0.1:${port}/): client error (Connect): tcp connect error: Connection refused (os error ${constants.errno.ECONNREFUSED})` },
    });
  });

  it('reports a name that does not resolve as Deno does', async () => {
    const notFound = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test 10.9.8.7'), { code: 'ENOTFOUND' }));
    expect(await guestErrorOf(guardedFetch(get('http://nowhere.test/'), fetchOptions(['nowhere.test'], { resolveHost: notFound })))).toEqual({
      name: 'TypeError',
      message: 'fetch failed',
      cause: { name: 'Error', message: 'error sending request for url (http://nowhere.test/): client error (Connect): dns error: failed to lookup address information: Name or service not known' },
    });
  });

  it('reports a server that hangs up before answering, or in the middle of the body', async () => {
    expect(await guestErrorOf(guardedFetch(get(`${server.origin}/hang-up`), fetchOptions(grant())))).toEqual({
      name: 'TypeError',
      message: 'fetch failed',
      cause: { name: 'Error', message: `error sending request for url (${server.origin}/hang-up): client error (SendRequest): connection closed before message completed` },
    });
    expect(await guestErrorOf(guardedFetch(get(`${server.origin}/cut-body`), fetchOptions(grant())))).toEqual({
      name: 'TypeError',
      message: 'error reading a body from connection',
    });
  });

  it('keeps credentials in the URL out of error messages', async () => {
    const port = await closedPort();
    const error = await guestErrorOf(guardedFetch(get(`http://user:secret@127.0.0.1:${port}/`), fetchOptions([`127.0.0.1:${port}`])));
    expect(error.cause?.message).toContain(`(http://127.0.0.1:${port}/)`);
    expect(JSON.stringify(error)).not.toContain('secret');
  });
});
