import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { Scalar } from '@scalar/hono-api-reference';
import type { AppDeps } from '../deps.ts';
import type { AppEnv } from '../env.ts';
import { ProblemError } from '../problem.ts';
import { Problem } from '../schemas.ts';

const Health = z.object({
  status: z.literal('ok'),
  version: z.string(),
  uptimeSeconds: z.number(),
}).openapi('Health');

const healthRoute = createRoute({
  method: 'get',
  path: '/healthz',
  tags: ['system'],
  summary: 'Liveness: answers while the service accepts requests.',
  responses: {
    200: { description: 'The service is up.', content: { 'application/json': { schema: Health } } },
    503: { description: 'The service is shutting down.', content: { 'application/problem+json': { schema: Problem } } },
  },
});

const metricsRoute = createRoute({
  method: 'get',
  path: '/metrics',
  tags: ['system'],
  summary: 'Prometheus metrics: HTTP requests and latency by route and status; tool calls and duration by outcome, capability denials, sandbox workers and calls in flight, worker exits; process metrics.',
  responses: {
    200: { description: 'Prometheus text exposition format.', content: { 'text/plain': { schema: z.string() } } },
  },
});

/** Unauthenticated operational routes: health, metrics, the OpenAPI document and its reference page. */
export function systemRoutes(deps: AppDeps, documentOf: () => unknown): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  const started = Date.now();

  app.openapi(healthRoute, (c) => {
    if (deps.isDraining?.() === true) throw new ProblemError('unavailable', 'The service is shutting down.');
    return c.json({ status: 'ok' as const, version: deps.version, uptimeSeconds: Math.round((Date.now() - started) / 1000) }, 200);
  });

  app.openapi(metricsRoute, async (c) =>
    c.text(await deps.metrics.registry.metrics(), 200, { 'content-type': deps.metrics.registry.contentType }));

  app.get('/openapi.json', (c) => c.json(documentOf()));
  // The reference page loads Scalar's script from its CDN; /openapi.json itself needs nothing outside.
  app.get('/docs', Scalar({ url: '/openapi.json', pageTitle: 'Paddock API reference' }));
  return app;
}
