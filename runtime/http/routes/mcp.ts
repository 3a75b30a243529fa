import type { OpenAPIHono } from '@hono/zod-openapi';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { McpSessionLimitError, McpSessions, McpUnavailableError } from '../../mcp/sessions.ts';
import type { McpSessionsOptions } from '../../mcp/sessions.ts';
import type { AppDeps } from '../deps.ts';
import type { AppEnv } from '../env.ts';
import { authenticate, requireScope } from '../middleware/auth.ts';
import { ProblemError } from '../problem.ts';
import { problemContent } from '../schemas.ts';

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

const MCP_DESCRIPTION = 'The tool registry over the Model Context Protocol (Streamable HTTP, stateful sessions: '
  + '`initialize` answers with an `Mcp-Session-Id` header that later requests send back). Tools are listed with their '
  + 'input schemas and called with the caller key\'s policy as their grant; progress notifications carry `ctx.update` '
  + 'text; a cancelled request aborts its call; `notifications/tools/list_changed` follows hot reloads. Needs the `invoke` scope.';

/**
 * Describes /mcp in the OpenAPI document. The route is plain Hono (the MCP SDK's transport owns
 * its bodies), so nothing is validated from this: it is documentation only.
 */
export function documentMcp(registry: OpenAPIHono<AppEnv>['openAPIRegistry']): void {
  const common = {
    path: '/mcp',
    tags: ['MCP'],
    security: [{ bearer: [] }],
  };
  const refusals = {
    401: { description: 'No key, or an unknown one.', content: problemContent },
    403: { description: 'The key lacks the invoke scope.', content: problemContent },
    413: { description: 'The body is over http.maxBodyBytes.', content: problemContent },
    429: { description: 'Too many MCP sessions (per caller or in all); see Retry-After.', content: problemContent },
    503: { description: 'The tool system is not running, or the service is shutting down.', content: problemContent },
  };
  registry.registerPath({
    ...common, method: 'post', summary: 'Send MCP JSON-RPC messages', description: MCP_DESCRIPTION,
    responses: {
      200: { description: 'JSON-RPC responses, as application/json or a text/event-stream (as the client accepts).' },
      202: { description: 'Notifications and responses accepted (nothing to answer).' },
      400: { description: 'Not a valid MCP message, or no Mcp-Session-Id on a request other than initialize (JSON-RPC error body).' },
      404: { description: 'An unknown, expired or closed session, or another caller\'s: initialize again (JSON-RPC error body).' },
      ...refusals,
    },
  });
  registry.registerPath({
    ...common, method: 'get', summary: 'Open the MCP server-to-client event stream of a session',
    responses: { 200: { description: 'A text/event-stream of server notifications (tools/list_changed).' }, 404: { description: 'Unknown session.' }, ...refusals },
  });
  registry.registerPath({
    ...common, method: 'delete', summary: 'End an MCP session',
    responses: { 200: { description: 'The session is closed.' }, 404: { description: 'Unknown session.' }, ...refusals },
  });
}
