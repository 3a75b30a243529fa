import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import type { AgentEvent } from '../../agent/events.ts';
import { SessionBusyError, SessionNotFoundError, UnknownProfileError } from '../../sessions/session-service.ts';
import type { RunResult, SessionService } from '../../sessions/session-service.ts';
import { agentEventToSse, describeAgentSse } from '../sse.ts';
import type { AppEnv } from '../env.ts';
import { requireScope } from '../middleware/auth.ts';
import { ProblemError } from '../problem.ts';
import { problemContent } from '../schemas.ts';

const problem = (description: string) => ({ description, content: problemContent });
const unauthorized = problem('Missing or unknown key.');
const notFound = problem('No such session (or it belongs to another caller).');

const SessionId = z.object({
  id: z.string().min(1).max(100).openapi({ param: { name: 'id', in: 'path' }, example: 'ses_4f0c2d1b9a8e4c7f8d6b5a4e3c2b1a09' }),
});

const SessionSummary = z.object({
  id: z.string(),
  profile: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  running: z.boolean().openapi({ description: 'A turn is running now.' }),
}).openapi('SessionSummary');

const ToolError = z.object({ kind: z.string(), message: z.string() });

const ToolCallOutcome = z.object({
  callId: z.string(), tool: z.string(), ok: z.boolean(), content: z.string(), error: ToolError.optional(),
  metadata: z.record(z.string(), z.unknown()).nullable(), terminate: z.boolean(), durationMs: z.number(),
  refused: z.boolean().openapi({ description: 'The call never ran (unknown tool, invalid arguments, overload).' }),
  images: z.array(z.string()).openapi({ description: 'Media types of images the result passed to the model.' }),
}).openapi('ToolCallOutcome');

const DisplayEntry = z.object({
  seq: z.number().int(),
  at: z.string(),
  entry: z.looseObject({ type: z.enum(['user', 'assistant', 'tool-call', 'tool-result', 'run-end', 'error']) }),
}).openapi('DisplayEntry');

const SessionView = SessionSummary.extend({
  history: z.array(DisplayEntry).openapi({ description: 'The display history: messages, tool calls and results, run ends and errors.' }),
  todo: z.array(z.object({ id: z.number().int(), content: z.string(), status: z.enum(['pending', 'in_progress', 'done', 'failed', 'skipped']), note: z.string().nullable() })),
  scratchpad: z.array(z.object({ name: z.string(), content: z.string(), updatedAt: z.string() })),
  tools: z.array(z.string()).openapi({ description: 'The tools a run of this session is offered now.' }),
}).openapi('SessionView');

const CreateSession = z.object({
  profile: z.string().min(1).max(64).optional().openapi({ description: 'The profile (config "profiles"); "default" when absent.' }),
}).strict();

const PostMessage = z.object({
  content: z.string().openapi({ description: 'The user message. Empty ones are refused (400), over the limit too (413).' }),
}).strict();

const RunResponse = z.object({
  sessionId: z.string(),
  status: z.literal('ended'),
  reason: z.enum(['answered', 'step-limit', 'terminated', 'cancelled']),
  text: z.string().openapi({ description: 'The final assistant text.' }),
  steps: z.number().int(),
  toolCalls: z.array(ToolCallOutcome),
}).openapi('RunResult');

const createRoute_ = createRoute({
  method: 'post', path: '/sessions', tags: ['sessions'],
  summary: 'Creates a session. It starts with the read-only tool view unless its profile opens writes.',
  security: [{ bearer: [] }],
  middleware: [requireScope('invoke')] as const,
  request: { body: { required: false, content: { 'application/json': { schema: CreateSession } } } },
  responses: {
    201: { description: 'Created.', content: { 'application/json': { schema: SessionSummary } } },
    400: problem('Malformed body, or an unknown profile.'),
    401: unauthorized,
  },
});

const listRoute = createRoute({
  method: 'get', path: '/sessions', tags: ['sessions'],
  summary: 'The caller\'s sessions (every session for admin keys), most recently active first.',
  security: [{ bearer: [] }],
  middleware: [requireScope('invoke')] as const,
  responses: {
    200: { description: 'The sessions.', content: { 'application/json': { schema: z.object({ sessions: z.array(SessionSummary) }) } } },
    401: unauthorized,
  },
});

const getRoute = createRoute({
  method: 'get', path: '/sessions/{id}', tags: ['sessions'],
  summary: 'A session: its display history, todo list, scratchpad and current tools.',
  security: [{ bearer: [] }],
  middleware: [requireScope('invoke')] as const,
  request: { params: SessionId },
  responses: {
    200: { description: 'The session.', content: { 'application/json': { schema: SessionView } } },
    401: unauthorized,
    404: notFound,
  },
});

const deleteRoute = createRoute({
  method: 'delete', path: '/sessions/{id}', tags: ['sessions'],
  summary: 'Deletes a session with its history and state, cancelling its running turn first.',
  security: [{ bearer: [] }],
  middleware: [requireScope('invoke')] as const,
  request: { params: SessionId },
  responses: { 204: { description: 'Deleted.' }, 401: unauthorized, 404: notFound },
});

const cancelRoute = createRoute({
  method: 'post', path: '/sessions/{id}/cancel', tags: ['sessions'],
  summary: 'Cancels the running turn: its tool calls are aborted, and what it did so far is kept.',
  security: [{ bearer: [] }],
  middleware: [requireScope('invoke')] as const,
  request: { params: SessionId },
  responses: {
    200: { description: 'Whether a turn was running.', content: { 'application/json': { schema: z.object({ cancelled: z.boolean() }) } } },
    401: unauthorized,
    404: notFound,
  },
});

const messageRoute = createRoute({
  method: 'post', path: '/sessions/{id}/messages', tags: ['sessions'],
  summary: 'Sends a user message and runs the agent loop until the model answers without tool calls, a result terminates, or the step limit.',
  description: `With \`Accept: text/event-stream\` the run streams these events:\n\n${describeAgentSse()}\n\n`
    + 'A client that disconnects cancels the run (its tools are aborted). One run per session at a time: a second gets 409.',
  security: [{ bearer: [] }],
  middleware: [requireScope('invoke')] as const,
  request: { params: SessionId, body: { required: true, content: { 'application/json': { schema: PostMessage } } } },
  responses: {
    200: {
      description: 'The run ended (answered, step limit, terminated or cancelled).',
      content: {
        'application/json': { schema: RunResponse },
        'text/event-stream': { schema: z.string().openapi({ description: 'step, delta, tool_call, tool_update, tool_result, retry events, then one done or error event.' }) },
      },
    },
    400: problem('Malformed body or an empty message.'),
    401: unauthorized,
    404: notFound,
    409: problem('The session is already running a turn.'),
    413: problem('The message (or the body) is over the limit.'),
    500: problem('The run failed inside Paddock (`error.kind`: internal; logged); the session is intact.'),
    502: problem('The model endpoint failed after retries (`error.kind`: unreachable, timeout, rate_limited, server_error, bad_response, rejected); the session is intact.'),
  },
});

/** /v1/sessions*: create, list, read, delete, cancel, and post messages (JSON or SSE). */
export function sessionRoutes(sessions: SessionService): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();

  app.openapi(createRoute_, (c) => {
    const { profile } = c.req.valid('json');
    const created = guard(() => sessions.create(c.var.caller, profile));
    return c.json(created, 201);
  });

  app.openapi(listRoute, (c) => c.json({ sessions: sessions.list(c.var.caller) }, 200));

  app.openapi(getRoute, async (c) => {
    const view = await guardAsync(() => sessions.view(c.var.caller, c.req.valid('param').id));
    // Display entries are plain JSON (optional members absent, never undefined), as the schema says.
    const history = view.history as unknown as z.infer<typeof DisplayEntry>[];
    return c.json({ ...view, history, todo: [...view.todo], scratchpad: [...view.scratchpad], tools: [...view.tools] }, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    await guardAsync(() => sessions.delete(c.var.caller, c.req.valid('param').id));
    return c.body(null, 204);
  });

  app.openapi(cancelRoute, (c) => c.json({ cancelled: guard(() => sessions.cancel(c.var.caller, c.req.valid('param').id)) }, 200));

  app.openapi(messageRoute, async (c) => {
    const { id } = c.req.valid('param');
    const { content } = c.req.valid('json');
    if (content.trim() === '') {
      throw new ProblemError('invalid-body', 'The message is empty; send some text in "content".', { extensions: { errors: [{ pointer: '/content', message: 'must not be empty' }] } });
    }
    if (content.length > sessions.limits.maxMessageChars) {
      throw new ProblemError('payload-too-large', `The message has ${content.length} characters; the limit is ${sessions.limits.maxMessageChars}.`);
    }
    // Reserved before any response starts, so an unknown session or a busy one still gets its status.
    const ticket = guard(() => sessions.begin(c.var.caller, id));
    const wantsStream = (c.req.header('accept') ?? '').includes('text/event-stream');
    if (!wantsStream) {
      const result = await ticket.run(content, { signal: c.req.raw.signal });
      if (result.status === 'failed') {
        const extensions = { sessionId: id, error: result.error, steps: result.steps };
        if (result.error.kind === 'internal') throw new ProblemError('internal', `${result.error.message} Send the message again to retry.`, { extensions });
        throw new ProblemError('bad-gateway', `The model endpoint failed (${result.error.kind}): ${result.error.message} The session is intact; send the message again to retry.`, { extensions });
      }
      return c.json(runBody(id, result), 200);
    }
    const disconnected = new AbortController();
    const onClose = (): void => { disconnected.abort(new DOMException('The client disconnected.', 'AbortError')); };
    c.req.raw.signal.addEventListener('abort', onClose, { once: true });
    return streamSSE(c, async (stream) => {
      stream.onAbort(onClose);
      let written = Promise.resolve();
      const emit = (event: AgentEvent): void => {
        if (stream.aborted || stream.closed) return;
        written = written.then(() => stream.writeSSE(agentEventToSse(event)));
      };
      try {
        await ticket.run(content, { signal: disconnected.signal, onEvent: emit });
      } finally {
        c.req.raw.signal.removeEventListener('abort', onClose);
      }
      await written;
    });
  });

  return app;
}

function runBody(sessionId: string, result: Extract<RunResult, { status: 'ended' }>) {
  return { sessionId, status: result.status, reason: result.reason, text: result.text, steps: result.steps, toolCalls: [...result.toolCalls] };
}

/** The session service's refusals as problems (the one place they meet HTTP statuses). */
function sessionProblem(error: unknown): unknown {
  if (error instanceof SessionNotFoundError) return new ProblemError('not-found', error.message, { cause: error });
  if (error instanceof SessionBusyError) return new ProblemError('conflict', error.message, { cause: error });
  if (error instanceof UnknownProfileError) {
    return new ProblemError('invalid-body', error.message, { extensions: { errors: [{ pointer: '/profile', message: error.message }] }, cause: error });
  }
  return error;
}

function guard<Result>(body: () => Result): Result {
  try {
    return body();
  } catch (error) {
    throw sessionProblem(error);
  }
}

async function guardAsync<Result>(body: () => Promise<Result>): Promise<Result> {
  try {
    return await body();
  } catch (error) {
    throw sessionProblem(error);
  }
}
