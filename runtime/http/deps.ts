import type { KeyStore } from '../auth/keys.ts';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ToolSystem } from '../coordinator/tool-system.ts';
import type { McpRouteOptions } from './routes/mcp.ts';
import type { SessionService } from '../sessions/session-service.ts';

/** Everything the HTTP app needs, passed in explicitly so tests can build it without a socket. */
export interface AppDeps {
  readonly config: Config;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly keys: KeyStore;
  readonly version: string;
  /** The tool system (sandbox, registry, coordinator); absent in tests of the HTTP shell alone. */
  readonly tools?: ToolSystem | undefined;
  /** The session service (agent loop, /v1/sessions); absent without a tool system. */
  readonly sessions?: SessionService | undefined;
  /** Options of the /mcp endpoint (session bounds; a hook that receives the session manager). */
  readonly mcp?: McpRouteOptions | undefined;
  /** True once shutdown has begun: /healthz answers 503 so load balancers stop sending. */
  readonly isDraining?: () => boolean;
}
