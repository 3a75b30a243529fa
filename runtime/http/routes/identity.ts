import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { AppEnv } from '../env.ts';
import { problemContent } from '../schemas.ts';

const Identity = z.object({
  name: z.string().openapi({ description: 'The caller name the key is configured under.' }),
  scopes: z.array(z.enum(['admin', 'invoke'])),
}).openapi('Identity');

const whoamiRoute = createRoute({
  method: 'get',
  path: '/whoami',
  tags: ['auth'],
  summary: 'The caller and scopes the presented key stands for; a quick way to check a key.',
  security: [{ bearer: [] }],
  responses: {
    200: { description: 'The key is valid.', content: { 'application/json': { schema: Identity } } },
    401: { description: 'Missing or unknown key.', content: problemContent },
  },
});

export function identityRoutes(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(whoamiRoute, (c) => c.json({ name: c.var.caller.name, scopes: [...c.var.caller.scopes] }, 200));
  return app;
}
