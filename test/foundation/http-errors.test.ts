/**
 * Pins: every error the HTTP app answers is application/problem+json (RFC 9457) with a precise
 * detail and the request id, and never a stack trace or a host path: 401 without or with a bad key
 * (with WWW-Authenticate), 403 for a missing scope, 404 for an unknown route, 405 (with Allow) for a known path under another method, 400 for malformed JSON
 * naming the position, 415 for a non-JSON body, 413 for a body over http.maxBodyBytes before that
 * body is read whole (declared or streamed), and a bare 500 for an unexpected error, which is logged.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY, HOST_PATH, INVOKE_KEY, bearer, expectProblem, makeTestApp, mountTestRoutes,
} from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';

const LIMIT = 4096;
const CHUNK = 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let t: TestApp;
beforeEach(() => {
  t = makeTestApp({ http: { maxBodyBytes: LIMIT } });
  mountTestRoutes(t.app);
});

const postJson = (path: string, body: string, headers: Record<string, string> = {}): Promise<Response> =>
  Promise.resolve(t.app.request(path, {
    method: 'POST', headers: { ...bearer(INVOKE_KEY), 'content-type': 'application/json', ...headers }, body,
  }));

/** A body that never ends, counting what the server pulled from it. */
function endlessBody(): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled += CHUNK;
      controller.enqueue(new TextEncoder().encode(' '.repeat(CHUNK)));
    },
  }, { highWaterMark: 0 });
  return { stream, pulled: () => pulled };
}

/** A JSON document of exactly `size` bytes, streamed in chunks of CHUNK bytes. */
function streamedJson(size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(`[${' '.repeat(size - 2)}]`);
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(bytes.subarray(offset, offset + CHUNK));
      offset += CHUNK;
      if (offset >= bytes.length) controller.close();
    },
  });
}

describe('401 unauthorized', () => {
  it('without an Authorization header, with a challenge', async () => {
    const response = await t.app.request('/v1/whoami');
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="paddock"');
    await expectProblem(response, {
      status: 401, type: 'unauthorized', title: 'Unauthorized', instance: '/v1/whoami',
      detail: 'Missing Authorization header; send "Authorization: Bearer <key>".',
    });
  });

  it.each([
    ['an unknown key', 'Bearer pdk_not-a-configured-key-0000'],
    ['another scheme', `Basic ${INVOKE_KEY}`],
    ['a bare key', INVOKE_KEY],
  ])('with %s', async (_label, authorization) => {
    const response = await t.app.request('/v1/whoami', { headers: { authorization } });
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="paddock"');
    await expectProblem(response, {
      status: 401, type: 'unauthorized', title: 'Unauthorized', instance: '/v1/whoami',
      detail: 'The bearer key is malformed or unknown.',
    });
  });

  it('for an unknown /v1 route too, so routes are not revealed to callers without a key', async () => {
    await expectProblem(await t.app.request('/v1/nothing-here'), {
      status: 401, type: 'unauthorized', title: 'Unauthorized', instance: '/v1/nothing-here',
      detail: 'Missing Authorization header; send "Authorization: Bearer <key>".',
    });
  });

  it('and the granted case: a known key reaches the route as its caller', async () => {
    const response = await t.app.request('/v1/whoami', { headers: bearer(INVOKE_KEY) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ name: 'ci', scopes: ['invoke'] });
  });
});

describe('403 forbidden', () => {
  it('when the key lacks the scope the route requires', async () => {
    await expectProblem(await t.app.request('/v1/test/admin-only', { headers: bearer(INVOKE_KEY) }), {
      status: 403, type: 'forbidden', title: 'Forbidden', instance: '/v1/test/admin-only',
      detail: 'The key "ci" lacks the "admin" scope this route requires.',
    });
  });

  it('and the granted case: an admin key passes', async () => {
    const response = await t.app.request('/v1/test/admin-only', { headers: bearer(ADMIN_KEY) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ caller: 'operator' });
  });
});

describe('404 not found', () => {
  it.each([
    ['GET', '/nope'],
    ['GET', '/healthz/extra'],
    ['GET', '/v1/missing'],
    ['DELETE', '/v1/missing'],
  ])('for %s %s', async (method, path) => {
    const response = await t.app.request(path, { method, headers: bearer(INVOKE_KEY) });
    await expectProblem(response, {
      status: 404, type: 'not-found', title: 'Not found', instance: path, detail: `No route matches ${method} ${path}.`,
    });
  });
});

describe('405 method not allowed', () => {
  it.each([
    ['DELETE', '/metrics', 'GET, HEAD'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['PUT', '/v1/whoami', 'GET, HEAD'],
  ])('for %s %s, with Allow: %s', async (method, path, allow) => {
    const response = await t.app.request(path, { method, headers: bearer(INVOKE_KEY) });
    expect(response.headers.get('allow')).toBe(allow);
    await expectProblem(response, {
      status: 405, type: 'method-not-allowed', title: 'Method not allowed', instance: path, detail: `${path} does not take ${method}; it takes ${allow}.`,
    });
  });

  it('only after authentication on /v1: a caller without a key learns nothing about the route', async () => {
    const response = await t.app.request('/v1/whoami', { method: 'PUT' });
    expect(response.status).toBe(401);
  });
});

describe('400 malformed JSON', () => {
  it.each([
    ['{"name": "x",}', 'Expected double-quoted property name in JSON at position 13 (line 1 column 14)'],
    ['{"name": nope}', "Unexpected token 'o' in JSON at position 10 (line 1 column 11)"],
    ['{\n  "name": \'x\'\n}', "Unexpected token ''' in JSON at position 12 (line 2 column 11)"],
    ['[1, 2', "Expected ',' or ']' after array element in JSON at position 5 (line 1 column 6)"],
  ])('names where %j broke, without echoing it', async (body, where) => {
    await expectProblem(await postJson('/v1/test/echo', body), {
      status: 400, type: 'invalid-body', title: 'Invalid request body', instance: '/v1/test/echo',
      detail: `Malformed JSON in the request body: ${where}.`,
    });
  });

  it('for an empty body', async () => {
    await expectProblem(await postJson('/v1/test/echo', ''), {
      status: 400, type: 'invalid-body', title: 'Invalid request body', instance: '/v1/test/echo',
      detail: 'The request body is empty; expected a JSON document.',
    });
  });

  it('and the granted case: a well-formed document reaches the route', async () => {
    const response = await postJson('/v1/test/echo', '{"name": "x", "n": [1, 2]}', { 'content-type': 'application/json; charset=utf-8' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ name: 'x', n: [1, 2] });
  });
});

describe('415 unsupported media type', () => {
  it('for a body that is not declared as JSON', async () => {
    await expectProblem(await postJson('/v1/test/echo', '{}', { 'content-type': 'text/plain' }), {
      status: 415, type: 'unsupported-media-type', title: 'Unsupported media type', instance: '/v1/test/echo',
      detail: 'Expected a JSON body with "Content-Type: application/json", found "text/plain".',
    });
  });

  it('for a body with no Content-Type at all', async () => {
    const response = await t.app.request('/v1/test/echo', {
      method: 'POST', headers: bearer(INVOKE_KEY), body: new TextEncoder().encode('{}'),
    });
    await expectProblem(response, {
      status: 415, type: 'unsupported-media-type', title: 'Unsupported media type', instance: '/v1/test/echo',
      detail: 'Expected a JSON body with "Content-Type: application/json", found no Content-Type.',
    });
  });

  it('accepts +json media types', async () => {
    const response = await postJson('/v1/test/echo', '{"a": 1}', { 'content-type': 'application/merge-patch+json' });
    expect(response.status).toBe(200);
  });
});

describe('413 payload too large', () => {
  const tooLarge = {
    status: 413, type: 'payload-too-large', title: 'Payload too large', instance: '/v1/test/echo',
    detail: `The request body exceeds the limit of ${LIMIT} bytes.`,
  };

  it('from the declared Content-Length, without reading the body at all', async () => {
    const body = endlessBody();
    const response = await t.app.request('/v1/test/echo', {
      method: 'POST', body: body.stream, duplex: 'half',
      headers: { ...bearer(INVOKE_KEY), 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) },
    });
    await expectProblem(response, tooLarge);
    expect(body.pulled()).toBe(0);
  });

  it('from a streamed body, as soon as it passes the limit (the body never ends)', async () => {
    const body = endlessBody();
    const response = await t.app.request('/v1/test/echo', {
      method: 'POST', body: body.stream, duplex: 'half', headers: { ...bearer(INVOKE_KEY), 'content-type': 'application/json' },
    });
    await expectProblem(response, tooLarge);
    expect(body.pulled()).toBeGreaterThan(LIMIT);
    expect(body.pulled()).toBeLessThanOrEqual(LIMIT + 2 * CHUNK);
  });

  it('authentication comes first: an unauthenticated client never gets a body read, whatever its size', async () => {
    const response = await t.app.request('/v1/test/echo', {
      method: 'POST', body: '{}', headers: { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) },
    });
    expect(response.status).toBe(401);
  });

  it('and the granted case: a body of exactly the limit is accepted, declared or streamed', async () => {
    const declared = await postJson('/v1/test/echo', `[${' '.repeat(LIMIT - 2)}]`, { 'content-length': String(LIMIT) });
    expect(declared.status).toBe(200);
    expect(await declared.json()).toEqual([]);
    const streamed = await t.app.request('/v1/test/echo', {
      method: 'POST', body: streamedJson(LIMIT), duplex: 'half', headers: { ...bearer(INVOKE_KEY), 'content-type': 'application/json' },
    });
    expect(streamed.status).toBe(200);
    expect(await streamed.json()).toEqual([]);
  });
});

describe('500 internal error', () => {
  it('answers a generic detail for an unexpected error and logs the error itself', async () => {
    const response = await t.app.request('/v1/test/boom', { headers: bearer(INVOKE_KEY) });
    const body = await expectProblem(response, {
      status: 500, type: 'internal', title: 'Internal server error', instance: '/v1/test/boom',
      detail: 'The server could not complete the request; the error was logged.',
    });
    const logged = t.logs.records().find((record) => record['msg'] === 'unhandled error');
    expect(logged).toMatchObject({
      level: 'error', requestId: body['requestId'], caller: 'ci',
      err: { type: 'Error', message: `ENOENT: no such file or directory, open '${HOST_PATH}'` },
    });
    expect((logged?.['err'] as { stack: string }).stack).toContain('at ');
  });

  it('logs client mistakes as requests, not as errors', async () => {
    await postJson('/v1/test/echo', '{');
    await t.app.request('/v1/whoami');
    await t.app.request('/v1/test/echo', {
      method: 'POST', body: endlessBody().stream, duplex: 'half', headers: { ...bearer(INVOKE_KEY), 'content-type': 'application/json' },
    });
    const levels = t.logs.records().map((record) => `${String(record['level'])} ${String(record['msg'])}`);
    expect(levels).toEqual(['info request', 'info request', 'info request']);
  });
});

describe('request ids on errors', () => {
  it('are generated UUIDs and match the body and the access log', async () => {
    const response = await t.app.request('/nope');
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(UUID);
    expect(((await response.json()) as { requestId: string }).requestId).toBe(requestId);
    expect(t.logs.records()).toMatchObject([{ msg: 'request', requestId, res: { status: 404 } }]);
  });
});
