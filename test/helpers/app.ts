import { OpenAPIHono } from '@hono/zod-openapi';
import { expect } from 'vitest';
import { KeyStore, hashKey } from '../../runtime/auth/keys.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import type { Config } from '../../runtime/config/schema.ts';
import { createApp } from '../../runtime/http/app.ts';
import type { AppEnv } from '../../runtime/http/env.ts';
import { requireScope } from '../../runtime/http/middleware/auth.ts';
import { createLogger } from '../../runtime/observability/logger.ts';
import type { Logger } from '../../runtime/observability/logger.ts';
import { createMetrics } from '../../runtime/observability/metrics.ts';
import type { Metrics } from '../../runtime/observability/metrics.ts';

/** Keys of the two test callers: "operator" holds `admin`, "ci" holds `invoke`. */
export const ADMIN_KEY = 'pdk_test-admin-key-0123456789';
export const INVOKE_KEY = 'pdk_test-invoke-key-0123456789';
export const TEST_KEYS = [
  { name: 'operator', sha256: hashKey(ADMIN_KEY), scopes: ['admin' as const] },
  { name: 'ci', sha256: hashKey(INVOKE_KEY), scopes: ['invoke' as const] },
];

/** The embedded defaults exactly as loadConfig produces them, with the test keys and `http` overrides. */
export function testConfig(http: Partial<Config['http']> = {}, cwd = '/srv/paddock'): Config {
  const config = loadConfig({ env: {}, cwd });
  return { ...config, apiKeys: TEST_KEYS, http: { ...config.http, ...http } };
}

/** A logger whose JSON lines land in memory, so tests can read what would have been logged. */
export interface LogCapture {
  readonly log: Logger;
  /** Every line written so far, raw. */
  text(): string;
  /** Every line written so far, parsed. */
  records(): Record<string, unknown>[];
}

export function captureLog(): LogCapture {
  const lines: string[] = [];
  const log = createLogger('info', { write: (line: string) => { lines.push(line); } });
  return {
    log,
    text: () => lines.join(''),
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

export interface TestApp {
  readonly app: ReturnType<typeof createApp>;
  readonly logs: LogCapture;
  readonly metrics: Metrics;
  readonly config: Config;
}

/** createApp over real parts: loaded config, pino into memory, its own prom-client registry, a KeyStore. */
export function makeTestApp(options: { http?: Partial<Config['http']>; isDraining?: () => boolean } = {}): TestApp {
  const config = testConfig(options.http);
  const logs = captureLog();
  const metrics = createMetrics();
  const app = createApp({
    config, log: logs.log, metrics, keys: new KeyStore(config.apiKeys), version: '0.0.0-test',
    ...(options.isDraining === undefined ? {} : { isDraining: options.isDraining }),
  });
  return { app, logs, metrics, config };
}

export const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/**
 * Test-only routes under /v1/test, on a fresh OpenAPIHono mounted on an app that createApp built:
 * they sit behind that app's own middleware (request id, observe, body limit, /v1 auth and JSON
 * body) and its one notFound/onError, exactly as the service's own /v1 routes do.
 */
export function mountTestRoutes(app: OpenAPIHono<AppEnv>): void {
  const routes = new OpenAPIHono<AppEnv>();
  routes.get('/admin-only', requireScope('admin'), (c) => c.json({ caller: c.var.caller.name }));
  routes.post('/echo', async (c) => c.json(await c.req.json<unknown>()));
  routes.get('/items/:id', (c) => c.json({ id: c.req.param('id') }));
  routes.get('/boom', () => {
    throw new Error(`ENOENT: no such file or directory, open '${HOST_PATH}'`);
  });
  app.route('/v1/test', routes);
}

/** A host path that the /v1/test/boom route puts in its error message. */
export const HOST_PATH = '/root/.paddock/secrets/config.json';

/** Fails when a response body shows a stack trace, a host path or a source file name. */
export function expectNoLeak(text: string): void {
  expect(text).not.toMatch(/\n\s+at |node_modules|\.ts:\d|\/root\/|\/srv\//);
  expect(text).not.toContain(process.cwd());
}

/** Asserts an RFC 9457 problem response, exactly, with the request id of its X-Request-Id header. */
export async function expectProblem(
  response: Response,
  expected: { status: number; type: string; title: string; detail: string; instance: string },
): Promise<Record<string, unknown>> {
  const text = await response.text();
  expectNoLeak(text);
  expect({ status: response.status, contentType: response.headers.get('content-type') })
    .toEqual({ status: expected.status, contentType: 'application/problem+json' });
  const requestId = response.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body).toEqual({
    type: `urn:paddock:problem:${expected.type}`, title: expected.title, status: expected.status,
    detail: expected.detail, instance: expected.instance, requestId,
  });
  return body;
}
