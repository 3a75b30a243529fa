import { OpenAPIHono } from '@hono/zod-openapi';
import type { Hook } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import type { Logger } from '../observability/logger.ts';
import { allowedMethods } from './allowed-methods.ts';
import type { AppDeps } from './deps.ts';
import type { AppEnv } from './env.ts';
import { authenticate } from './middleware/auth.ts';
import { jsonBody } from './middleware/json-body.ts';
import { observe } from './middleware/observe.ts';
import { ProblemError, problemResponse } from './problem.ts';
import { execRoutes } from './routes/exec.ts';
import { identityRoutes } from './routes/identity.ts';
import { manualRoutes } from './routes/manuals.ts';
import { documentMcp, mcpRoutes } from './routes/mcp.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { systemRoutes } from './routes/system.ts';
import { toolRoutes } from './routes/tools.ts';

/**
 * Request ids from clients are kept only when they are short and plain, so they are safe to log.
 * Hono's middleware keeps an offered id matching [\w=-] up to `limitLength` without asking the
 * generator, so the limit is passed there too and this pattern includes those characters.
 */
const CLIENT_REQUEST_ID_MAX = 128;
const CLIENT_REQUEST_ID = /^[\w.:=-]{1,128}$/;

/** Turns a failed zod validation into one 400 that lists every violation with its JSON pointer. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (result.success) return;
  const errors = result.error.issues.map((issue) => ({
    pointer: `/${issue.path.map((part) => String(part).replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`,
    message: issue.message,
  }));
  const summary = errors.map((error) => `${error.pointer}: ${error.message}`).join('; ');
  const where = result.target === 'json' ? 'request body' : `request ${result.target}`;
  throw new ProblemError('invalid-body', `Invalid ${where}: ${summary}`, { extensions: { errors } });
};

/** The HTTP app over explicit dependencies; `app.request()` drives it in tests without a socket. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

  app.use(requestId({
    headerName: 'X-Request-Id',
    limitLength: CLIENT_REQUEST_ID_MAX,
    generator: (c) => {
      const offered = c.req.header('x-request-id');
      return offered !== undefined && CLIENT_REQUEST_ID.test(offered) ? offered : crypto.randomUUID();
    },
  }));
  app.use(observe(deps.log, deps.metrics));
  const limitBody = bodyLimit({
    maxSize: deps.config.http.maxBodyBytes,
    onError: () => {
      throw new ProblemError('payload-too-large', `The request body exceeds the limit of ${deps.config.http.maxBodyBytes} bytes.`);
    },
  });

  app.route('/', systemRoutes(deps, () => openApiDocument(app, deps.version)));

  // Authentication first: an unauthenticated client never gets the server to read (and hold) a body.
  app.use('/v1/*', authenticate(deps.keys), limitBody, jsonBody());
  app.route('/v1', identityRoutes());
  if (deps.tools !== undefined) {
    app.route('/v1', toolRoutes(deps.tools));
    app.route('/v1', execRoutes(deps.tools));
    app.route('/v1', manualRoutes(deps.tools));
  }
  if (deps.sessions !== undefined) app.route('/v1', sessionRoutes(deps.sessions));
  // MCP (Streamable HTTP): its own auth and body limit, the same keys and registry; 503 without a tool system.
  app.route('/', mcpRoutes(deps, deps.mcp));
  documentMcp(app.openAPIRegistry);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });

  app.notFound((c) => {
    const allowed = allowedMethods(app.routes, c.req.path);
    if (allowed.length > 0) {
      return problemResponse(c, new ProblemError('method-not-allowed', `${c.req.path} does not take ${c.req.method}; it takes ${allowed.join(', ')}.`, { headers: { Allow: allowed.join(', ') } }));
    }
    return problemResponse(c, new ProblemError('not-found', `No route matches ${c.req.method} ${c.req.path}.`));
  });
  app.onError((error, c) => {
    if (error instanceof ProblemError) return problemResponse(c, error);
    if (error instanceof HTTPException && error.status < 500) {
      return problemResponse(c, new ProblemError(error.status === 413 ? 'payload-too-large' : 'invalid-body', error.message));
    }
    (c.get('log') as Logger | undefined ?? deps.log).error({ err: error }, 'unhandled error');
    return problemResponse(c, error);
  });
  return app;
}

function openApiDocument(app: OpenAPIHono<AppEnv>, version: string): unknown {
  return app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'Paddock',
      version,
      description: 'Hardened runtime for LLM-agent tools. Every /v1 route takes `Authorization: Bearer <key>`; errors are application/problem+json (RFC 9457).',
    },
    security: [],
  });
}
