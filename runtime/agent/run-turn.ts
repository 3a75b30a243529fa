import type { ToolDescription } from '../tools/contract.ts';
import type { AgentEvent, RunEndReason } from './events.ts';
import { executeToolCalls } from './execute-tool-calls.ts';
import type { ExecutedCall, ToolInvoker } from './execute-tool-calls.ts';
import { fitContext, omittedNotice } from './context-window.ts';
import type { ContextContentPart, ContextMessage, DisplayEntry } from './messages.ts';
import { ModelError } from './model-client.ts';
import type { ModelClient, ModelReply } from './model-client.ts';
import { allResultsTerminate, hasNoToolCalls, isStepLimit } from './stop-conditions.ts';
import type { StepResult } from './stop-conditions.ts';
import { imageNoticeText } from './tool-messages.ts';
import { toolSchemas } from './tool-schemas.ts';

/** What a run works with; the session service builds it when the run starts and again after a profile switch. */
export interface RunSettings {
  readonly model: string;
  readonly systemPrompt?: string | undefined;
  readonly tools: readonly ToolDescription[];
  readonly maxSteps: number;
  readonly stream: boolean;
  /** Characters of the session's context sent at most per request (the newest; see ./context-window.ts). */
  readonly maxContextChars?: number | undefined;
}

export interface StepAdditions {
  readonly context: readonly ContextMessage[];
  readonly display: readonly DisplayEntry[];
}

export interface RunTurnOptions {
  readonly model: ModelClient;
  /** Read at every step, so a switch_profile during the run takes effect at the next one. */
  readonly settings: () => RunSettings | Promise<RunSettings>;
  /** The stored model context, the new user message included. */
  readonly context: readonly ContextMessage[];
  readonly invoke: ToolInvoker;
  readonly signal: AbortSignal;
  readonly onEvent: (event: AgentEvent) => void;
  /**
   * Persists what a step added (each call one transaction). The context gets a step whole: the
   * assistant message with its tool calls and every result together, so it is never left with a
   * call and no result. The display gets the calls as they start and the results when they end.
   */
  readonly onStep: (additions: StepAdditions) => void;
}

export type TurnOutcome =
  | { readonly status: 'ended'; readonly reason: RunEndReason; readonly steps: number; readonly text: string }
  | { readonly status: 'failed'; readonly error: { readonly kind: ModelError['kind'] | 'internal'; readonly message: string }; readonly steps: number };

/**
 * The agent loop: call the model with the run's tools, execute the tool calls it makes, feed the
 * results back under their tool_call ids, and repeat until the model answers without tool calls,
 * every result of a batch asks to terminate, the step limit is reached, or the signal aborts.
 * A model failure (after the client's retries) ends the run with an error; whatever earlier steps
 * added stays, so the session remains usable.
 */
export async function runTurn(options: RunTurnOptions): Promise<TurnOutcome> {
  const messages: ContextMessage[] = [...options.context];
  const steps: StepResult[] = [];
  const schemaCache = new WeakMap<RunSettings, ReturnType<typeof toolSchemas>>();
  const end = (reason: RunEndReason, text: string): TurnOutcome => {
    options.onStep({ context: [], display: [{ type: 'run-end', reason, steps: steps.length }] });
    options.onEvent({ type: 'run-end', reason, steps: steps.length, text });
    return { status: 'ended', reason, steps: steps.length, text };
  };

  for (;;) {
    if (options.signal.aborted) return end('cancelled', '');
    const settings = await options.settings();
    let schemas = schemaCache.get(settings);
    if (schemas === undefined) {
      schemas = toolSchemas(settings.tools);
      schemaCache.set(settings, schemas);
    }
    options.onEvent({ type: 'step-start', step: steps.length + 1 });

    let partial = '';
    let reply: ModelReply;
    try {
      const system: ContextMessage[] = settings.systemPrompt === undefined || settings.systemPrompt === '' ? [] : [{ role: 'system', content: settings.systemPrompt }];
      reply = await options.model.complete(
        { model: settings.model, messages: [...system, ...requestContext(messages, settings.maxContextChars)], tools: schemas, stream: settings.stream },
        {
          signal: options.signal,
          onTextDelta: (text) => {
            partial += text;
            options.onEvent({ type: 'text-delta', text });
          },
          onRetry: ({ attempt, delayMs, error }) => {
            options.onEvent({ type: 'model-retry', attempt, delayMs, kind: error.kind, message: error.message });
          },
        },
      );
    } catch (error) {
      if (isAborted(options.signal)) {
        // What was already streamed to the client is kept, so both buffers tell the same story.
        if (partial !== '') options.onStep({ context: [{ role: 'assistant', content: partial }], display: [{ type: 'assistant', content: partial }] });
        return end('cancelled', partial);
      }
      const failure = error instanceof ModelError
        ? { kind: error.kind, message: error.message }
        : { kind: 'internal' as const, message: `The run failed: ${error instanceof Error ? error.message : String(error)}` };
      options.onStep({ context: [], display: [{ type: 'error', kind: failure.kind, message: failure.message }] });
      options.onEvent({ type: 'run-error', error: failure, steps: steps.length });
      return { status: 'failed', error: failure, steps: steps.length };
    }

    const assistant: ContextMessage = reply.toolCalls.length === 0
      ? { role: 'assistant', content: reply.text }
      : {
        role: 'assistant', content: reply.text === '' ? null : reply.text,
        tool_calls: reply.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })),
      };
    const display: DisplayEntry[] = reply.text === '' ? [] : [{ type: 'assistant', content: reply.text }];
    for (const call of reply.toolCalls) display.push({ type: 'tool-call', callId: call.id, tool: call.name, arguments: call.arguments });

    let executed: ExecutedCall[] = [];
    if (reply.toolCalls.length > 0) {
      // The display shows the calls while they run; the context gets the step whole, once it is done.
      options.onStep({ context: [], display: display.splice(0) });
      executed = await executeToolCalls(reply.toolCalls, {
        tools: new Map(settings.tools.map((tool) => [tool.name, tool])),
        invoke: options.invoke, signal: options.signal, onEvent: options.onEvent,
      });
    }
    const added: ContextMessage[] = [assistant, ...executed.map((call): ContextMessage => ({ role: 'tool', tool_call_id: call.outcome.callId, content: call.text }))];
    const imageMessage = imagesMessage(executed);
    if (imageMessage !== undefined) added.push(imageMessage);
    for (const call of executed) {
      const { outcome } = call;
      display.push({
        type: 'tool-result', callId: outcome.callId, tool: outcome.tool, ok: outcome.ok, content: outcome.content,
        ...(outcome.error === undefined ? {} : { error: outcome.error }), durationMs: outcome.durationMs,
        ...(outcome.images.length === 0 ? {} : { images: outcome.images }),
      });
    }
    options.onStep({ context: added, display });
    messages.push(...added);
    steps.push({ toolCalls: reply.toolCalls, toolResults: executed.map((call) => call.outcome) });

    const state = { steps };
    if (hasNoToolCalls(state)) return end('answered', reply.text);
    if (isAborted(options.signal)) return end('cancelled', reply.text);
    if (allResultsTerminate(state)) return end('terminated', reply.text);
    if (isStepLimit(settings.maxSteps)(state)) return end('step-limit', reply.text);
  }
}

/**
 * Images from the batch's results go to the model as one synthetic user message after the tool
 * messages (the API wants every tool message right after its assistant message). The display
 * history only lists their media types.
 */
function imagesMessage(executed: readonly ExecutedCall[]): ContextMessage | undefined {
  const parts: ContextContentPart[] = [];
  for (const call of executed) {
    if (call.images.length === 0) continue;
    parts.push({ type: 'text', text: imageNoticeText(call.outcome.tool, call.outcome.callId, call.images.length) });
    for (const image of call.images) parts.push({ type: 'image_url', image_url: { url: image.url } });
  }
  return parts.length === 0 ? undefined : { role: 'user', content: parts };
}

/** A fresh read of the signal (TypeScript would narrow a repeated `signal.aborted` to its first value). */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

/** The context one request sends: all of it, or its newest part with a note when it is over the budget. */
function requestContext(messages: readonly ContextMessage[], maxChars: number | undefined): readonly ContextMessage[] {
  if (maxChars === undefined) return messages;
  const fitted = fitContext(messages, maxChars);
  return fitted.omitted === 0 ? fitted.messages : [omittedNotice(fitted.omitted), ...fitted.messages];
}
