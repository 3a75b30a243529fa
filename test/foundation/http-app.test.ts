/**
 * Pins: the app's operational surface through app.request(): /healthz (503 while draining),
 * /metrics in Prometheus text with request counts and latency labelled by route pattern (never the
 * raw path) plus process metrics, an X-Request-Id on every response (a safe client id echoed, any
 * other replaced), JSON access logs in which keys and the Authorization header never appear, and
 * /openapi.json generated from the route definitions with /docs rendering it.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../runtime/observability/logger.ts';
import { ADMIN_KEY, INVOKE_KEY, bearer, makeTestApp, mountTestRoutes } from '../helpers/app.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('/healthz', () => {
  it('answers 200 with the version while the service accepts requests', async () => {
    const { app } = makeTestApp();
    const response = await app.request('/healthz');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ status: 'ok', version: '0.0.0-test', uptimeSeconds: 0 });
  });

  it('answers 503 once draining has begun, so load balancers stop sending', async () => {
    let draining = false;
    const { app } = makeTestApp({ isDraining: () => draining });
    expect((await app.request('/healthz')).status).toBe(200);
    draining = true;
    const response = await app.request('/healthz');
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toEqual({
      type: 'urn:paddock:problem:unavailable', title: 'Service unavailable', status: 503,
      detail: 'The service is shutting down.', instance: '/healthz', requestId: response.headers.get('x-request-id'),
    });
  });
});

describe('/metrics', () => {
  it('counts requests by method, route pattern and status, never by raw path', async () => {
    const { app } = makeTestApp();
    mountTestRoutes(app);
    await app.request('/healthz');
    await app.request('/healthz');
    await app.request('/v1/test/items/item-4711x', { headers: bearer(INVOKE_KEY) });
    await app.request('/v1/test/items/secret-looking-id', { headers: bearer(INVOKE_KEY) });
    await app.request('/v1/whoami');
    await app.request('/no/such/path/8f2c');
    const response = await app.request('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    const counts = text.split('\n').filter((line) => line.startsWith('paddock_http_requests_total{'));
    expect(counts.sort()).toEqual([
      'paddock_http_requests_total{method="GET",route="/healthz",status="200"} 2',
      'paddock_http_requests_total{method="GET",route="/v1/test/items/:id",status="200"} 2',
      'paddock_http_requests_total{method="GET",route="/v1/whoami",status="401"} 1',
      'paddock_http_requests_total{method="GET",route="unmatched",status="404"} 1',
    ]);
    expect(text).toContain('# TYPE paddock_http_requests_total counter');
    expect(text).toContain('# TYPE paddock_http_request_duration_seconds histogram');
    expect(text).toContain('paddock_http_request_duration_seconds_count{method="GET",route="/healthz",status="200"} 2');
    expect(text).toMatch(/^paddock_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="unmatched",status="404"\} 1$/m);
    expect(text).not.toMatch(/item-4711x|secret-looking-id|8f2c/);
  });

  it('includes the process metrics', async () => {
    const { app } = makeTestApp();
    const text = await (await app.request('/metrics')).text();
    for (const name of [
      'paddock_process_cpu_user_seconds_total', 'paddock_process_resident_memory_bytes', 'paddock_process_start_time_seconds',
      'paddock_nodejs_heap_size_used_bytes', 'paddock_nodejs_eventloop_lag_seconds', 'paddock_nodejs_version_info',
    ]) {
      expect(text).toMatch(new RegExp(`^${name}(\\{[^}]*\\})? \\d`, 'm'));
    }
  });
});

describe('X-Request-Id', () => {
  it('is a fresh UUID on every response, and names the access log line', async () => {
    const { app, logs } = makeTestApp();
    const first = (await app.request('/healthz')).headers.get('x-request-id');
    const second = (await app.request('/metrics')).headers.get('x-request-id');
    expect(first).toMatch(UUID);
    expect(second).toMatch(UUID);
    expect(first).not.toBe(second);
    expect(logs.records().map((record) => record['requestId'])).toEqual([first, second]);
  });

  it.each(['trace-1.a:b_c=d', 'A'.repeat(128), '0f7c0a2e-1f6b-4a35-9a52-2c1ad2d87c1e'])('echoes the safe client id %s', async (id) => {
    const { app, logs } = makeTestApp();
    const response = await app.request('/nope', { headers: { 'x-request-id': id } });
    expect(response.headers.get('x-request-id')).toBe(id);
    expect(((await response.json()) as { requestId: string }).requestId).toBe(id);
    expect(logs.records()[0]?.['requestId']).toBe(id);
  });

  it.each([
    ['markup', 'abc<script>'],
    ['spaces', 'a b'],
    ['a log-line forgery', 'x\\n{"level":"fatal"}'],
    ['129 characters', 'A'.repeat(129)],
    ['255 characters', 'a'.repeat(255)],
    ['non-ASCII', 'réquête'],
  ])('replaces a client id with %s', async (_label, id) => {
    const { app, logs } = makeTestApp();
    const response = await app.request('/healthz', { headers: { 'x-request-id': id } });
    const echoed = response.headers.get('x-request-id');
    expect(echoed).toMatch(UUID);
    expect(logs.records()[0]?.['requestId']).toBe(echoed);
  });
});

describe('logs', () => {
  it('write one JSON access line per request with the caller, and never a key or the Authorization header', async () => {
    const { app, logs } = makeTestApp();
    mountTestRoutes(app);
    await app.request('/v1/whoami', { headers: bearer(ADMIN_KEY) });
    await app.request('/v1/whoami', { headers: { authorization: 'Bearer pdk_wrong-key-0123456789', cookie: 'session=abc' } });
    await app.request('/v1/test/boom', { headers: bearer(INVOKE_KEY) });
    const records = logs.records();
    expect(records.filter((record) => record['msg'] === 'request')).toEqual([
      { level: 'info', time: expect.any(String), service: 'paddock', requestId: expect.stringMatching(UUID), caller: 'operator',
        req: { method: 'GET', path: '/v1/whoami' }, res: { status: 200 }, ms: expect.any(Number), msg: 'request' },
      { level: 'info', time: expect.any(String), service: 'paddock', requestId: expect.stringMatching(UUID),
        req: { method: 'GET', path: '/v1/whoami' }, res: { status: 401 }, ms: expect.any(Number), msg: 'request' },
      { level: 'info', time: expect.any(String), service: 'paddock', requestId: expect.stringMatching(UUID), caller: 'ci',
        req: { method: 'GET', path: '/v1/test/boom' }, res: { status: 500 }, ms: expect.any(Number), msg: 'request' },
    ]);
    expect(logs.text()).not.toMatch(/pdk_|Bearer|session=abc/i);
  });

  it('redact the Authorization header, cookies and secrets wherever a record carries them', () => {
    const lines: string[] = [];
    const log = createLogger('info', { write: (line: string) => { lines.push(line); } });
    log.info({
      req: { headers: { authorization: `Bearer ${ADMIN_KEY}`, cookie: 'session=abc', accept: 'text/plain' } },
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      authorization: `Bearer ${ADMIN_KEY}`,
      apiKey: 'sk-1', key: 'k-1', secret: 's-1', token: 't-1', password: 'p-1',
      llm: { apiKey: 'sk-2' }, caller: { key: 'k-2', secret: 's-2', token: 't-2', password: 'p-2' },
    }, 'check');
    const record = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(record).toMatchObject({
      req: { headers: { authorization: '[redacted]', cookie: '[redacted]', accept: 'text/plain' } },
      headers: { authorization: '[redacted]' },
      authorization: '[redacted]',
      apiKey: '[redacted]', key: '[redacted]', secret: '[redacted]', token: '[redacted]', password: '[redacted]',
      llm: { apiKey: '[redacted]' }, caller: { key: '[redacted]', secret: '[redacted]', token: '[redacted]', password: '[redacted]' },
    });
    expect(lines.join('')).not.toMatch(/pdk_|sk-|k-\d|s-\d|t-\d|p-\d|session=abc/);
  });
});

describe('OpenAPI', () => {
  it('/openapi.json is generated from the route definitions, with their schemas', async () => {
    const { app } = makeTestApp();
    const response = await app.request('/openapi.json');
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string; info: { title: string; version: string };
      paths: Record<string, Record<string, { security?: unknown; responses: Record<string, { content: Record<string, { schema: unknown }> }> }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }>; securitySchemes: unknown };
    };
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toMatchObject({ title: 'Paddock', version: '0.0.0-test' });
    expect(Object.keys(document.paths).sort()).toEqual(['/healthz', '/mcp', '/metrics', '/v1/whoami']);
    // /mcp is plain Hono (the MCP SDK's transport owns its bodies), documented by hand.
    expect(Object.keys(document.paths['/mcp'] ?? {}).sort()).toEqual(['delete', 'get', 'post']);
    expect(document.paths['/mcp']?.['post']?.security).toEqual([{ bearer: [] }]);

    const whoami = document.paths['/v1/whoami']?.['get'];
    expect(whoami?.security).toEqual([{ bearer: [] }]);
    expect(whoami?.responses['200']?.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Identity' } } });
    expect(whoami?.responses['401']?.content).toEqual({ 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } });
    expect(document.paths['/healthz']?.['get']?.responses['200']?.content)
      .toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Health' } } });
    expect(Object.keys(document.paths['/metrics']?.['get']?.responses ?? {})).toEqual(['200']);

    expect(document.components.securitySchemes).toEqual({ bearer: { type: 'http', scheme: 'bearer' } });
    expect(document.components.schemas['Identity']).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The caller name the key is configured under.' },
        scopes: { type: 'array', items: { type: 'string', enum: ['admin', 'invoke'] } },
      },
      required: ['name', 'scopes'],
    });
    expect(document.components.schemas['Health']?.required).toEqual(['status', 'version', 'uptimeSeconds']);
    expect(document.components.schemas['Problem']?.required).toEqual(['type', 'title', 'status', 'detail', 'instance']);
  });

  it('/docs is an HTML reference page rendered from /openapi.json', async () => {
    const { app } = makeTestApp();
    const response = await app.request('/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=UTF-8');
    const html = await response.text();
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain('<title>Paddock API reference</title>');
    expect(html).toMatch(/"url":\s*"\/openapi\.json"/);
  });
});
