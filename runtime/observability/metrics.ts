import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per service instance (never prom-client's global), so tests and instances never share counters. */
export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
}

export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'paddock_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'paddock_http_requests_total',
      help: 'HTTP requests answered, by method, matched route and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'paddock_http_request_duration_seconds',
      help: 'Time to answer an HTTP request (until the response headers), by method, matched route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  };
}
