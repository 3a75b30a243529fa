import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { ToolSystem } from '../../coordinator/tool-system.ts';
import type { AppEnv } from '../env.ts';
import { requireScope } from '../middleware/auth.ts';
import { ProblemError } from '../problem.ts';
import { ToolNameParam, problemContent } from '../schemas.ts';

const manualRoute = createRoute({
  method: 'get',
  path: '/manuals/{name}',
  tags: ['tools'],
  summary: 'The manual of a tool (tool_manual): manuals/{name}.md, or one generated from its schema.',
  security: [{ bearer: [] }],
  middleware: [requireScope('invoke')] as const,
  request: { params: ToolNameParam },
  responses: {
    200: { description: 'The manual.', content: { 'text/markdown': { schema: z.string() } } },
    401: { description: 'Missing or unknown key.', content: problemContent },
    403: { description: 'The key lacks the "invoke" scope.', content: problemContent },
    404: { description: 'No tool of that name.', content: problemContent },
  },
});

export function manualRoutes(tools: ToolSystem): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(manualRoute, async (c) => {
    const { name } = c.req.valid('param');
    const manual = await tools.manual(name);
    if (manual === undefined) throw new ProblemError('not-found', `There is no tool named "${name}", so it has no manual.`);
    return c.body(manual, 200, { 'content-type': 'text/markdown; charset=utf-8' });
  });
  return app;
}
