import { randomUUID } from 'node:crypto';
import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { ToolSystem } from '../../coordinator/tool-system.ts';
import { TOOL_NAME } from '../../registry/validate-declarations.ts';
import type { InvokeResult, PermissionSet } from '../../tools/contract.ts';
import type { AppEnv } from '../env.ts';
import { requireScope } from '../middleware/auth.ts';
import { ProblemError, toolProblem } from '../problem.ts';
import {
  InvokeRequest, InvokeResponse, ReloadReport, ToolList, ToolNameParam, WriteToolReport, WriteToolRequest, problemContent,
} from '../schemas.ts';
import type { InvokeResponseBody } from '../schemas.ts';
import { streamInvoke } from '../sse.ts';

/**
 * Largest tool source PUT /v1/tools/{name} accepts, in bytes (the loader's own default limit; the
 * request body limit, http.maxBodyBytes, applies first).
 */
export const MAX_TOOL_SOURCE_BYTES = 256 * 1024;

const problem = (description: string) => ({ description, content: problemContent });
const unauthorized = problem('Missing or unknown key.');
const forbiddenScope = (scope: string) => problem(`The key lacks the "${scope}" scope.`);

const listRoute = createRoute({
  method: 'get',
  path: '/tools',
  tags: ['tools'],
  summary: 'Every tool on offer, built-in and user, with the load errors of the tools folder.',
  security: [{ bearer: [] }],
  middleware: [requireScope('invoke')] as const,
  responses: {
    200: { description: 'The live list.', content: { 'application/json': { schema: ToolList } } },
    401: unauthorized,
    403: forbiddenScope('invoke'),
  },
});

const invokeRoute = createRoute({
  method: 'post',
  path: '/tools/{name}/invoke',
  tags: ['tools'],
  summary: 'Calls a tool. With `Accept: text/event-stream`: `update` events (data `{ "text": ... }`), then one `result` event carrying the InvokeResult.',
  description: 'A tool that fails answers 200 with `ok: false` and `error.kind` (tool_error, not_capable, timeout, memory_limit, output_limit, aborted, crashed): '
    + 'failures are results. A client that disconnects aborts the call. In a stream, a failure of the server after the call started is sent as one `error` event (a problem).',
  security: [{ bearer: [] }],
  middleware: [requireScope('invoke')] as const,
  request: {
    params: ToolNameParam,
    body: { required: true, content: { 'application/json': { schema: InvokeRequest } } },
  },
  responses: {
    200: {
      description: 'The call ran (successfully or not).',
      content: {
        'application/json': { schema: InvokeResponse },
        'text/event-stream': { schema: z.string().openapi({ description: 'event: update (data {"text"}) ... then event: result (data InvokeResult).' }) },
      },
    },
    400: problem('Malformed body or grants (`invalid-body`), or params that do not match the tool\'s schema (`invalid-params`, every violation in `errors`).'),
    401: unauthorized,
    403: forbiddenScope('invoke'),
    404: problem('No tool of that name.'),
    413: problem('The body is over the limit.'),
    415: problem('The body is not JSON.'),
    429: problem('Too many calls running and queued; retry after the `Retry-After` seconds.'),
  },
});

const writeRoute = createRoute({
  method: 'put',
  path: '/tools/{name}',
  tags: ['tools'],
  summary: 'write_tool: checks that the source compiles and exports the four definitions, then writes tools/{name}.ts and swaps the new version in.',
  security: [{ bearer: [] }],
  middleware: [requireScope('admin')] as const,
  request: {
    params: ToolNameParam,
    body: { required: true, content: { 'application/json': { schema: WriteToolRequest } } },
  },
  responses: {
    200: { description: 'Replaced an existing tool.', content: { 'application/json': { schema: WriteToolReport } } },
    201: { description: 'Created a new tool.', content: { 'application/json': { schema: WriteToolReport } } },
    400: problem('A name outside ^[a-z][a-z0-9_]{0,63}$ (`invalid-tool-name`), or a malformed body.'),
    401: unauthorized,
    403: problem('The key lacks the "admin" scope (`forbidden`), or the name is a built-in tool\'s (`builtin-protected`).'),
    409: problem('Another file already defines a tool of that name.'),
    413: problem(`The source is over ${MAX_TOOL_SOURCE_BYTES} bytes, or the body over the request limit.`),
    415: problem('The body is not JSON.'),
    422: problem('The source does not compile or lacks an export (`invalid-tool-source`); every problem, as file:line:column, in `errors`. The previous version keeps serving.'),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/tools/{name}',
  tags: ['tools'],
  summary: 'delete_tool: removes a user tool and its file. Calls already running finish.',
  security: [{ bearer: [] }],
  middleware: [requireScope('admin')] as const,
  request: { params: ToolNameParam },
  responses: {
    204: { description: 'Deleted.' },
    401: unauthorized,
    403: problem('The key lacks the "admin" scope (`forbidden`), or the tool is built in (`builtin-protected`).'),
    404: problem('No user tool of that name.'),
  },
});

const reloadRoute = createRoute({
  method: 'post',
  path: '/tools/reload',
  tags: ['tools'],
  summary: 'reload_tools: rescans the tools folder; only changed bundles recompile, and a file that fails keeps its last good version.',
  security: [{ bearer: [] }],
  middleware: [requireScope('admin')] as const,
  responses: {
    200: { description: 'What changed, and the files that failed.', content: { 'application/json': { schema: ReloadReport } } },
    401: unauthorized,
    403: forbiddenScope('admin'),
  },
});

/** The wire form of an InvokeResult (SPEC §5), for JSON and for the SSE `result` event alike. */
export function invokeResponse(result: InvokeResult): InvokeResponseBody {
  return {
    callId: result.callId,
    tool: result.tool,
    ok: result.ok,
    content: result.content,
    ...(result.error === undefined ? {} : { error: { kind: result.error.kind, message: result.error.message } }),
    metadata: result.metadata === null ? null : { ...result.metadata },
    durationMs: result.durationMs,
  };
}

/** GET/POST/PUT/DELETE under /v1/tools over the tool system. */
export function toolRoutes(tools: ToolSystem): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();

  app.openapi(listRoute, (c) => c.json({
    tools: tools.registry.describeAll().map((tool) => ({
      name: tool.name, description: tool.description, parameters: { ...tool.parameters }, kind: tool.kind, source: tool.source, permissions: copyPermissions(tool.permissions),
    })),
    errors: tools.registry.errors().map((error) => ({ file: error.file, ...(error.name === undefined ? {} : { name: error.name }), message: error.message })),
  }, 200));

  app.openapi(reloadRoute, async (c) => {
    const report = await tools.loader.reload();
    return c.json({
      added: [...report.added], updated: [...report.updated], removed: [...report.removed], unchanged: [...report.unchanged],
      errors: report.errors.map((error) => ({ file: error.file, ...(error.name === undefined ? {} : { name: error.name }), message: error.message })),
      durationMs: Math.round(report.durationMs * 10) / 10,
    }, 200);
  });

  app.openapi(invokeRoute, async (c) => {
    const { name } = c.req.valid('param');
    const body = c.req.valid('json');
    const callId = randomUUID();
    const run = (signal: AbortSignal, onUpdate?: (text: string) => void): Promise<InvokeResponseBody> => {
      const started = performance.now();
      return tools.coordinator.invoke(name, {
        caller: c.var.caller, params: body.params === undefined ? {} : body.params, grants: body.grants, callId, signal, onUpdate,
      }).then(invokeResponse, (error: unknown) => {
        if (!signal.aborted) throw toolProblem(error);
        // Aborted while queued: the client is gone, but the call still ends as a result.
        return { callId, tool: name, ok: false, content: '', error: { kind: 'aborted' as const, message: 'The call was aborted before it started.' }, metadata: null, durationMs: Math.round(performance.now() - started) };
      });
    };
    if (acceptsEventStream(c.req.header('accept'))) return streamInvoke(c, (emit, signal) => run(signal, emit));
    return c.json(await run(c.req.raw.signal), 200);
  });

  app.openapi(writeRoute, async (c) => {
    const { name } = c.req.valid('param');
    const { source } = c.req.valid('json');
    if (!TOOL_NAME.test(name)) {
      throw new ProblemError('invalid-tool-name', `${JSON.stringify(name)} is not a valid tool name: it must match ${TOOL_NAME.source} (a lowercase letter, then up to 63 lowercase letters, digits or underscores).`);
    }
    if (tools.registry.isBuiltin(name)) throw new ProblemError('builtin-protected', `"${name}" is a built-in tool; it cannot be overwritten. Choose another name.`);
    const bytes = Buffer.byteLength(source, 'utf8');
    if (bytes > MAX_TOOL_SOURCE_BYTES) {
      throw new ProblemError('payload-too-large', `The tool source is ${bytes} bytes, over the limit of ${MAX_TOOL_SOURCE_BYTES} bytes.`);
    }
    const report = await tools.loader.writeTool(name, source).catch((error: unknown) => { throw toolProblem(error); });
    const body = {
      name: report.name, file: report.file, created: report.created,
      permissions: copyPermissions(report.permissions),
      addedPermissions: copyPermissions(report.addedPermissions),
      removedPermissions: copyPermissions(report.removedPermissions),
    };
    return report.created ? c.json(body, 201) : c.json(body, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { name } = c.req.valid('param');
    if (tools.registry.isBuiltin(name)) throw new ProblemError('builtin-protected', `"${name}" is a built-in tool; it cannot be deleted.`);
    const removed = await tools.loader.deleteTool(name).catch((error: unknown) => { throw toolProblem(error); });
    if (!removed) throw new ProblemError('not-found', `There is no user tool named "${name}".`);
    return c.body(null, 204);
  });

  return app;
}

/** True when the client asks for an event stream (any Accept entry naming text/event-stream). */
function acceptsEventStream(accept: string | undefined): boolean {
  return accept?.split(',').some((entry) => entry.split(';')[0]?.trim().toLowerCase() === 'text/event-stream') ?? false;
}

type MutablePermissions = { net?: boolean | string[]; read?: boolean | string[]; write?: boolean | string[]; env?: boolean | string[] };

/** A plain copy of a (frozen, readonly) permission set, for the JSON body. */
function copyPermissions(permissions: PermissionSet): MutablePermissions {
  const copy: MutablePermissions = {};
  for (const key of ['net', 'read', 'write', 'env'] as const) {
    const value = permissions[key];
    if (value !== undefined) copy[key] = typeof value === 'boolean' ? value : [...value];
  }
  return copy;
}
