import type { SSEMessage } from 'hono/streaming';
import type { AgentEvent } from '../agent/events.ts';

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
