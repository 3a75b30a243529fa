/**
 * Internal events -> SSE frames: the one place that knows the wire event names, for a streamed
 * tool invoke (`update`, then one `result`) and for an agent run (`step`, `delta`, ..., then one
 * `done` or `error`).
 */
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { SSEMessage } from 'hono/streaming';
import type { AgentEvent } from '../agent/events.ts';
import type { AppEnv } from './env.ts';
import { ProblemError, asProblem, problemBody } from './problem.ts';
import type { InvokeResponseBody } from './schemas.ts';

/** What happens during a streamed invoke, in order: updates, then one result (or one error). */
export type InvokeEvent =
  | { type: 'tool-update'; text: string }
  | { type: 'tool-result'; result: InvokeResponseBody }
  | { type: 'stream-error'; problem: Record<string, unknown> };

/** The wire names of invoke events: the only place that knows them (SPEC §5: `update`, then one `result`). */
export function toSse(event: InvokeEvent): SSEMessage {
  switch (event.type) {
    case 'tool-update': return { event: 'update', data: JSON.stringify({ text: event.text }) };
    case 'tool-result': return { event: 'result', data: JSON.stringify(event.result) };
    case 'stream-error': return { event: 'error', data: JSON.stringify(event.problem) };
  }
}

/**
 * The wire names of agent-run events, and the one place that knows them. Each event's data is one
 * JSON object. A run ends with exactly one `done` or one `error` event.
 */
export const AGENT_SSE_EVENTS = {
  step: 'A model call begins: `{ step }` (1, 2, ...).',
  delta: 'Assistant text as it streams: `{ text }`.',
  tool_call: 'A tool call starts: `{ callId, tool, arguments }` (callId is the model\'s tool_call id; arguments the raw JSON text).',
  tool_update: 'A running tool reports progress: `{ callId, text }`.',
  tool_result: 'A tool call ended: `{ callId, tool, ok, content, error?: { kind, message }, metadata, terminate, durationMs, refused, images }`. '
    + 'Error kinds: tool_error, not_capable, timeout, memory_limit, output_limit, aborted, crashed, unknown_tool, invalid_arguments, overloaded; '
    + '`refused` means the call never ran; `images` lists the media types of images passed to the model.',
  retry: 'The model endpoint failed and the call is retried: `{ attempt, delayMs, kind, message }`.',
  done: 'The run ended: `{ reason, steps, text }`, reason one of answered, step-limit, terminated, cancelled.',
  error: 'The run failed (the session is intact; send again to retry): `{ kind, message, steps }`, kind one of unreachable, timeout, rate_limited, server_error, bad_response, rejected, internal.',
} as const;

export type AgentSseEventName = keyof typeof AGENT_SSE_EVENTS;

export function agentEventToSse(event: AgentEvent): SSEMessage {
  const message = (name: AgentSseEventName, data: unknown): SSEMessage => ({ event: name, data: JSON.stringify(data) });
  switch (event.type) {
    case 'step-start': return message('step', { step: event.step });
    case 'text-delta': return message('delta', { text: event.text });
    case 'tool-call-start': return message('tool_call', { callId: event.callId, tool: event.tool, arguments: event.arguments });
    case 'tool-update': return message('tool_update', { callId: event.callId, text: event.text });
    case 'tool-result': return message('tool_result', event.result);
    case 'model-retry': return message('retry', { attempt: event.attempt, delayMs: event.delayMs, kind: event.kind, message: event.message });
    case 'run-end': return message('done', { reason: event.reason, steps: event.steps, text: event.text });
    case 'run-error': return message('error', { kind: event.error.kind, message: event.error.message, steps: event.steps });
  }
}

/** For the OpenAPI description of the streamed response. */
export function describeAgentSse(): string {
  return Object.entries(AGENT_SSE_EVENTS).map(([name, text]) => `- \`${name}\`: ${text}`).join('\n');
}

/** Runs one call; `emit` receives its updates, `signal` aborts it. */
export type StreamedCall = (emit: (text: string) => void, signal: AbortSignal) => Promise<InvokeResponseBody>;

/**
 * Answers a call as a text/event-stream: `update` events as they happen, then one `result` event.
 *
 * The response (status 200) starts only once the call was admitted, so the refusals that come
 * before a call runs (unknown tool, invalid params or grants, overload) still answer with their
 * own status: the coordinator raises them synchronously or from settled promises, so every one
 * has rejected `start`'s promise before the next turn of the event loop. A client that goes away
 * (socket closed, stream cancelled) aborts the call.
 */
export async function streamInvoke(c: Context<AppEnv>, start: StreamedCall): Promise<Response> {
  const controller = new AbortController();
  const abort = (): void => { controller.abort(new DOMException('The client disconnected.', 'AbortError')); };
  c.req.raw.signal.addEventListener('abort', abort, { once: true });

  const early: InvokeEvent[] = [];
  let emit = (event: InvokeEvent): void => { early.push(event); };
  const call = start((text) => { emit({ type: 'tool-update', text }); }, controller.signal);
  try {
    await refusedBeforeNextTurn(call);
  } catch (error) {
    c.req.raw.signal.removeEventListener('abort', abort);
    throw error;
  }

  return streamSSE(c, async (stream) => {
    stream.onAbort(abort);
    let written = Promise.resolve();
    emit = (event) => { written = written.then(() => stream.writeSSE(toSse(event))); };
    for (const event of early) emit(event);
    try {
      emit({ type: 'tool-result', result: await call });
    } catch (error) {
      // Only a refusal later than the coordinator makes them today, or a bug: the status is sent, so it goes as an event.
      if (!(error instanceof ProblemError)) c.var.log.error({ err: error }, 'streamed call failed after it started');
      emit({ type: 'stream-error', problem: problemBody(c, asProblem(error)) });
    } finally {
      c.req.raw.signal.removeEventListener('abort', abort);
    }
    await written; // writes to a closed stream are dropped by hono, never thrown
  });
}

/** Rejects with `call`'s error if it has already failed by the next turn of the event loop; else resolves. */
function refusedBeforeNextTurn(call: Promise<unknown>): Promise<void> {
  return new Promise((resolve, reject) => {
    setImmediate(resolve);
    call.catch(reject);
  });
}
