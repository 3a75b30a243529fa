import { InvalidParamsError, ToolNotFoundError } from '../coordinator/coordinator.ts';
import { OverloadedError } from '../coordinator/limiter.ts';
import type { InvokeResult, ToolDescription } from '../tools/contract.ts';
import type { AgentEvent, ToolCallOutcome } from './events.ts';
import { imagesOf, withoutImages } from './images.ts';
import type { ToolImage } from './images.ts';
import { parseArguments } from './tool-call-stream.ts';
import type { AssembledToolCall } from './tool-call-stream.ts';
import { failureText, invalidArgumentsText, malformedArgumentsText, overloadedText, unknownToolText } from './tool-messages.ts';

/** Runs one tool call through the coordinator's choke point (validation, grants, limits, audit). */
export type ToolInvoker = (
  name: string,
  params: unknown,
  options: { readonly signal: AbortSignal; readonly onUpdate: (text: string) => void },
) => Promise<InvokeResult>;

export interface ExecutedCall {
  readonly outcome: ToolCallOutcome;
  /** The tool message text the model reads. */
  readonly text: string;
  readonly images: readonly ToolImage[];
}

export interface ExecuteOptions {
  /** The tools this run offers, by name; anything else is refused as unknown. */
  readonly tools: ReadonlyMap<string, ToolDescription>;
  readonly invoke: ToolInvoker;
  readonly signal: AbortSignal;
  readonly onEvent: (event: AgentEvent) => void;
}

type Planned =
  | { readonly kind: 'refused'; readonly call: AssembledToolCall; readonly executed: ExecutedCall }
  | { readonly kind: 'run'; readonly call: AssembledToolCall; readonly params: Record<string, unknown>; readonly mode: ToolDescription['mode'] };

/**
 * Executes one batch of tool calls and returns their outcomes in the model's order. Calls naming a
 * tool outside the run's set, or with arguments that are not a JSON object, are refused without
 * running. Runs of consecutive parallel-mode calls go concurrently; a sequential-mode call waits for
 * everything before it and runs alone, so the model's order holds wherever it can matter.
 */
export async function executeToolCalls(calls: readonly AssembledToolCall[], options: ExecuteOptions): Promise<ExecutedCall[]> {
  const results = new Array<ExecutedCall | undefined>(calls.length);
  const plans = calls.map((call) => plan(call, options.tools));
  let group: Promise<void>[] = [];
  const flush = async (): Promise<void> => {
    await Promise.all(group);
    group = [];
  };
  for (const [index, planned] of plans.entries()) {
    if (planned.kind === 'refused') {
      options.onEvent({ type: 'tool-call-start', callId: planned.call.id, tool: planned.call.name, arguments: planned.call.arguments });
      options.onEvent({ type: 'tool-result', result: planned.executed.outcome });
      results[index] = planned.executed;
      continue;
    }
    const run = async (): Promise<void> => { results[index] = await runOne(planned.call, planned.params, options); };
    if (planned.mode === 'parallel') {
      group.push(run());
    } else {
      await flush();
      await run();
    }
  }
  await flush();
  return results.map((result, index) => result ?? refusedCall(calls[index] ?? { id: '', name: '', arguments: '' }, 'tool_error', 'The call was not executed.'));
}

function plan(call: AssembledToolCall, tools: ReadonlyMap<string, ToolDescription>): Planned {
  const tool = tools.get(call.name);
  if (tool === undefined) {
    return { kind: 'refused', call, executed: refusedCall(call, 'unknown_tool', `There is no tool named "${call.name}" in this session.`, unknownToolText(call.name, [...tools.keys()])) };
  }
  const parsed = parseArguments(call.arguments);
  if (!parsed.ok) {
    return { kind: 'refused', call, executed: refusedCall(call, 'invalid_arguments', `Malformed JSON arguments: ${parsed.detail}`, malformedArgumentsText(call.name, parsed.detail)) };
  }
  return { kind: 'run', call, params: parsed.value, mode: tool.mode };
}

async function runOne(call: AssembledToolCall, params: Record<string, unknown>, options: ExecuteOptions): Promise<ExecutedCall> {
  options.onEvent({ type: 'tool-call-start', callId: call.id, tool: call.name, arguments: call.arguments });
  let executed: ExecutedCall;
  if (options.signal.aborted) {
    executed = { ...refusedCall(call, 'aborted', 'The run was cancelled before this call started.'), text: failureText('aborted', 'The run was cancelled before this call started.') };
  } else {
    try {
      const result = await options.invoke(call.name, params, {
        signal: options.signal,
        onUpdate: (text) => { options.onEvent({ type: 'tool-update', callId: call.id, text }); },
      });
      executed = fromInvokeResult(call, result, options.signal.aborted);
    } catch (error) {
      executed = refusedByCoordinator(call, error, options.tools);
    }
  }
  options.onEvent({ type: 'tool-result', result: executed.outcome });
  return executed;
}

/** A call that failed once its run was cancelled failed because of the cancellation, whatever the tool made of it. */
function fromInvokeResult(call: AssembledToolCall, result: InvokeResult, cancelled: boolean): ExecutedCall {
  const images = result.ok ? imagesOf(result.metadata) : [];
  const kind = !result.ok && cancelled ? 'aborted' : result.error?.kind ?? 'tool_error';
  const outcome: ToolCallOutcome = {
    callId: call.id, tool: call.name, ok: result.ok, content: result.content,
    ...(result.ok ? {} : { error: { kind, message: result.error?.message ?? result.content } }),
    metadata: withoutImages(result.metadata), terminate: result.terminate, durationMs: result.durationMs,
    refused: false, images: images.map((image) => image.mediaType),
  };
  const text = result.ok
    ? (result.content === '' ? '(The tool returned no output.)' : result.content)
    : failureText(kind, result.error?.message ?? result.content);
  return { outcome, text, images };
}

function refusedByCoordinator(call: AssembledToolCall, error: unknown, tools: ReadonlyMap<string, ToolDescription>): ExecutedCall {
  if (error instanceof InvalidParamsError) {
    return refusedCall(call, 'invalid_arguments', error.message, invalidArgumentsText(call.name, error.violations));
  }
  if (error instanceof ToolNotFoundError) {
    // Removed (a reload, delete_tool) since the run started.
    return refusedCall(call, 'unknown_tool', error.message, unknownToolText(call.name, [...tools.keys()].filter((name) => name !== call.name)));
  }
  if (error instanceof OverloadedError) return refusedCall(call, 'overloaded', error.message, overloadedText(error.message));
  const message = error instanceof Error ? error.message : String(error);
  return refusedCall(call, 'tool_error', message);
}

function refusedCall(call: AssembledToolCall, kind: NonNullable<ToolCallOutcome['error']>['kind'], message: string, text = failureText(kind, message)): ExecutedCall {
  return {
    outcome: { callId: call.id, tool: call.name, ok: false, content: '', error: { kind, message }, metadata: null, terminate: false, durationMs: 0, refused: true, images: [] },
    text,
    images: [],
  };
}
