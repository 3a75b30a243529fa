import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { McpSessionLimitError, McpSessions, McpUnavailableError } from '../../mcp/sessions.ts';
import type { McpSessionsOptions } from '../../mcp/sessions.ts';
import type { AppDeps } from '../deps.ts';
import type { AppEnv } from '../env.ts';
import { authenticate, requireScope } from '../middleware/auth.ts';
import { ProblemError } from '../problem.ts';

export interface McpRouteOptions {
  /** Session bounds; see McpSessionsOptions. */
  readonly sessions?: Pick<McpSessionsOptions, 'maxSessions' | 'maxSessionsPerCaller' | 'idleTimeoutMs' | 'now' | 'sweepIntervalMs'>;
  /** Receives the session manager, so its owner can close it (at shutdown, in tests). */
  readonly onSessions?: (sessions: McpSessions) => void;
}

/**
 * `POST|GET|DELETE /mcp`: the tool registry over the Model Context Protocol (Streamable HTTP,
 * stateful sessions). Same bearer auth (the `invoke` scope) and body limit as /v1, checked before
 * the body is read; auth and limit failures are problem+json like everywhere else, while the
 * MCP transport's own refusals keep the JSON-RPC error shape MCP clients expect.
 */
export function mcpRoutes(deps: AppDeps, options: McpRouteOptions = {}): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const maxBodyBytes = deps.config.http.maxBodyBytes;
  const sessions = deps.tools === undefined ? undefined : new McpSessions(deps.tools, {
    ...options.sessions,
    version: deps.version,
    log: deps.log.child({ component: 'mcp' }),
    maxBodyBytes,
    ...(deps.isDraining === undefined ? {} : { isDraining: deps.isDraining }),
  });
  if (sessions !== undefined) options.onSessions?.(sessions);

  routes.use('/mcp', authenticate(deps.keys), requireScope('invoke'), bodyLimit({
    maxSize: maxBodyBytes,
    onError: () => {
      throw new ProblemError('payload-too-large', `The request body exceeds the limit of ${maxBodyBytes} bytes.`);
    },
  }));

  routes.on(['POST', 'GET', 'DELETE'], '/mcp', async (c) => {
    if (sessions === undefined) throw new ProblemError('unavailable', 'The tool system is not running, so MCP is unavailable.');
    try {
      return await sessions.handle(c.req.raw, c.var.caller);
    } catch (error) {
      if (error instanceof McpSessionLimitError) {
        throw new ProblemError('overloaded', error.message, { headers: { 'retry-after': String(error.retryAfterSeconds) } });
      }
      if (error instanceof McpUnavailableError) throw new ProblemError('unavailable', error.message);
      throw error;
    }
  });

  routes.all('/mcp', (c) => {
    throw new ProblemError('method-not-allowed', `${c.req.method} is not served on /mcp; use POST, GET or DELETE.`, { headers: { allow: 'GET, POST, DELETE' } });
  });
  return routes;
}
