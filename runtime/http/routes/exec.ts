import { OpenAPIHono, createRoute } from '@hono/zod-openapi';
import type { ToolSystem } from '../../coordinator/tool-system.ts';
import type { AppEnv } from '../env.ts';
import { requireScope } from '../middleware/auth.ts';
import { toolProblem } from '../problem.ts';
import { ExecRequest, ExecResponse, problemContent } from '../schemas.ts';

const execRoute = createRoute({
  method: 'post',
  path: '/exec',
  tags: ['tools'],
  summary: 'code_exec: runs a TypeScript or JavaScript snippet in a fresh isolate, with no capability unless asked for and allowed.',
  description: 'A snippet that fails answers 200 with `ok: false`, its logs and `error` (compile_error, tool_error, not_capable, timeout, memory_limit, output_limit, aborted, crashed). '
    + 'A client that disconnects aborts it.',
  security: [{ bearer: [] }],
  middleware: [requireScope('invoke')] as const,
  request: { body: { required: true, content: { 'application/json': { schema: ExecRequest } } } },
  responses: {
    200: { description: 'The snippet ran (successfully or not).', content: { 'application/json': { schema: ExecResponse } } },
    400: { description: 'A malformed body or grants (every violation in `errors`).', content: problemContent },
    401: { description: 'Missing or unknown key.', content: problemContent },
    403: { description: 'The key lacks the "invoke" scope.', content: problemContent },
    413: { description: 'The body is over the limit.', content: problemContent },
    415: { description: 'The body is not JSON.', content: problemContent },
    429: { description: 'Too many calls running and queued; retry after the `Retry-After` seconds.', content: problemContent },
  },
});

export function execRoutes(tools: ToolSystem): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(execRoute, async (c) => {
    const body = c.req.valid('json');
    const outcome = await tools.coordinator.exec({
      caller: c.var.caller, code: body.code, language: body.language ?? 'ts', grants: body.grants, timeoutMs: body.timeoutMs, signal: c.req.raw.signal,
    }).catch((error: unknown) => { throw toolProblem(error); });
    return c.json({
      ok: outcome.ok,
      result: outcome.result,
      logs: outcome.logs.map((line) => ({ level: line.level, text: line.text })),
      ...(outcome.error === undefined ? {} : { error: { kind: outcome.error.kind, message: outcome.error.message } }),
    }, 200);
  });
  return app;
}
