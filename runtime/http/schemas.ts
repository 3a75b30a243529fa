import { z } from '@hono/zod-openapi';

/** RFC 9457 problem details, as every error response carries them. */
export const Problem = z.object({
  type: z.string().openapi({ example: 'urn:paddock:problem:invalid-body' }),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().openapi({ description: 'What went wrong, precisely enough to fix the request.' }),
  instance: z.string(),
  requestId: z.string().optional(),
  errors: z.array(z.object({ pointer: z.string(), message: z.string() })).optional()
    .openapi({ description: 'Every violation, with the JSON pointer into the request body.' }),
}).openapi('Problem');

export const problemContent = { 'application/problem+json': { schema: Problem } } as const;
