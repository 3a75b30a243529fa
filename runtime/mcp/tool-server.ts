import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolRequest, CallToolResult, ProgressToken } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { InvalidGrantsError, InvalidParamsError, ToolNotFoundError } from '../coordinator/coordinator.ts';
import { OverloadedError } from '../coordinator/limiter.ts';
import type { ToolSystem } from '../coordinator/tool-system.ts';
import type { Logger } from '../observability/logger.ts';
import { requestContextOf } from './request-context.ts';
import { invalidParamsResult, toCallToolResult, toMcpTool } from './tool-mapping.ts';

/** JSON-RPC code (implementation-defined server range) for a call refused because the service is at its concurrency bound. */
export const OVERLOADED_ERROR_CODE = -32029;

/** `_meta` key under which a client may narrow the call's grants, exactly as `grants` in POST /v1/tools/{name}/invoke. */
export const GRANTS_META_KEY = 'paddock/grants';

export interface ToolServerOptions {
  readonly version: string;
  readonly log: Logger;
  /** Called when a tool call starts; the returned function when it ends (session idleness). */
  readonly onCallStart?: () => () => void;
  /** Called with the registry generation a tools/list answer reflects. */
  readonly onList?: (generation: number) => void;
  /** Called after a call was cancelled: its response is never sent, so its stream must be closed. */
  readonly onCancelled?: (requestId: string | number) => void;
}

/** The SDK server createToolServer builds. */
export type ToolServer = ReturnType<typeof createToolServer>;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * One MCP server (one per session: the SDK binds a server to one transport) over the live
 * registry and the coordinator's choke point, so MCP calls get the same validation, grants,
 * concurrency bounds and audit as HTTP ones.
 *
 * The SDK's high-level McpServer wants zod schemas registered one by one; Paddock's tools are
 * JSON Schema in a registry that changes at run time, which is the case the low-level Server is for.
 */
export function createToolServer(tools: ToolSystem, options: ToolServerOptions) {
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the SDK keeps Server for exactly this: dynamic tools with JSON Schema.
  const server = new Server(
    { name: 'paddock', version: options.version },
    {
      capabilities: { tools: { listChanged: true } },
      // A reload that touches many files fires many registry changes: one notification per tick is enough.
      debouncedNotificationMethods: ['notifications/tools/list_changed'],
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => {
    options.onList?.(tools.registry.generation);
    return { tools: tools.registry.describeAll().map(toMcpTool) };
  });

  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(tools, options, request, extra));
  return server;
}

async function callTool(tools: ToolSystem, options: ToolServerOptions, request: CallToolRequest, extra: Extra): Promise<CallToolResult> {
  const context = requestContextOf(extra.authInfo);
  if (context === undefined) throw new McpError(ErrorCode.InternalError, 'The request carries no authenticated caller.');
  const { name } = request.params;
  // notifications/cancelled aborts extra.signal; a dropped HTTP request aborts context.signal.
  const signal = AbortSignal.any([extra.signal, context.signal]);
  const end = options.onCallStart?.();
  try {
    const result = await tools.coordinator.invoke(name, {
      caller: context.caller,
      params: request.params.arguments ?? {},
      grants: request.params._meta?.[GRANTS_META_KEY],
      sessionId: null,
      signal,
      onUpdate: progressReporter(request.params._meta?.progressToken, extra),
    });
    return toCallToolResult(result);
  } catch (error) {
    if (signal.aborted) throw new McpError(ErrorCode.ConnectionClosed, 'The call was cancelled.'); // never sent: the SDK drops answers to cancelled requests
    if (error instanceof InvalidParamsError) return invalidParamsResult(error.message, error.violations);
    if (error instanceof ToolNotFoundError || error instanceof InvalidGrantsError) throw new McpError(ErrorCode.InvalidParams, error.message);
    if (error instanceof OverloadedError) throw new McpError(OVERLOADED_ERROR_CODE, error.message, { retryAfterSeconds: error.retryAfterSeconds });
    options.log.error({ err: error, tool: name, caller: context.caller.name }, 'MCP tool call failed');
    throw new McpError(ErrorCode.InternalError, 'The server could not complete the call; the error was logged.');
  } finally {
    end?.();
    // A cancelled request gets no answer (JSON-RPC), so nothing would ever end its response stream.
    if (signal.aborted) options.onCancelled?.(extra.requestId);
  }
}

/** ctx.update(text) as notifications/progress, when the client asked for progress with a token. */
function progressReporter(token: ProgressToken | undefined, extra: Extra): ((text: string) => void) | undefined {
  if (token === undefined) return undefined;
  let progress = 0;
  return (text) => {
    progress += 1;
    extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message: text } })
      .catch(() => undefined); // the stream is gone: the client left, and the call's signal says so
  };
}
