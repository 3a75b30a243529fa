import { createMiddleware } from 'hono/factory';
import { matchedRoutes } from 'hono/route';
import type { Context } from 'hono';
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { AppEnv } from '../env.ts';

/** Gives each request a child logger, then logs and counts its response by matched route. */
export const observe = (log: Logger, metrics: Metrics) =>
  createMiddleware<AppEnv>(async function observe(c, next) {
    const started = performance.now();
    c.set('log', log.child({ requestId: c.var.requestId }));
    try {
      await next();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const labels = { method: c.req.method, route: routeLabel(c), status: String(c.res.status) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, seconds);
      c.var.log.info(
        { req: { method: c.req.method, path: c.req.path }, res: { status: c.res.status }, ms: Math.round(seconds * 1e4) / 10 },
        'request',
      );
    }
  });

/** The route pattern, never the raw path, so label cardinality stays bounded whatever clients send. */
function routeLabel(c: Context): string {
  const route = matchedRoutes(c).findLast((candidate) => candidate.method !== 'ALL');
  return route?.path ?? 'unmatched';
}
