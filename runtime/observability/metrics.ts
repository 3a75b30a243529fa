import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per service instance (never prom-client's global), so tests and instances never share counters. */
export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** Tool calls that ran (refusals before a call, such as 404 or 429, are HTTP metrics), by how they ended. */
  readonly toolCalls: Counter<'outcome'>;
  readonly toolDuration: Histogram<'outcome'>;
  /** Capability denials (the audit log has each one). */
  readonly capabilityDenials: Counter<'capability'>;
  /** Sandbox worker processes that stopped, by why. */
  readonly workerExits: Counter<'reason'>;
  /** Reads the live figures at scrape time (calls in the sandbox, workers alive). */
  observeSandbox(read: () => { inFlight: number; workers: number }): void;
}

/** Tool-call outcome labels: 'ok' or an error kind, never a tool name (tools are written at run time). */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

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
    toolCalls: new Counter({
      name: 'paddock_tool_calls_total',
      help: 'Tool and code_exec calls that ran, by outcome: ok or the error kind (tool_error, not_capable, timeout, memory_limit, output_limit, aborted, crashed, ...).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    toolDuration: new Histogram({
      name: 'paddock_tool_call_duration_seconds',
      help: 'Time a tool call took from admission to its outcome, by outcome.',
      labelNames: ['outcome'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    }),
    capabilityDenials: new Counter({
      name: 'paddock_capability_denials_total',
      help: 'Capability uses a call\'s grant refused (net, read, write, env).',
      labelNames: ['capability'],
      registers: [registry],
    }),
    workerExits: new Counter({
      name: 'paddock_sandbox_worker_exits_total',
      help: 'Sandbox worker processes that stopped and were replaced: crashed (exited on their own, e.g. a V8 fatal error), killed (by the supervisor: over their RSS ceiling, or stuck past a call\'s wall limit) or memory (the kernel held their memory cgroup\'s ceiling).',
      labelNames: ['reason'],
      registers: [registry],
    }),
    observeSandbox(read) {
      new Gauge({
        name: 'paddock_sandbox_calls_in_flight', help: 'Calls running in the sandbox workers now.', registers: [registry],
        collect() { this.set(read().inFlight); },
      });
      new Gauge({
        name: 'paddock_sandbox_workers', help: 'Sandbox worker processes alive now.', registers: [registry],
        collect() { this.set(read().workers); },
      });
    },
  };
}
