/**
 * What happens during a run, in order, as a discriminated union with noun-verb names. The wire
 * names (SSE) live in one mapper, runtime/http/sse.ts; nothing else knows them.
 */

export type RunEndReason = 'answered' | 'step-limit' | 'terminated' | 'cancelled';

/** Kinds of a tool call outcome: the sandbox's call error kinds plus what the loop refuses before running. */
export type ToolOutcomeKind =
  | 'tool_error' | 'not_capable' | 'timeout' | 'memory_limit' | 'output_limit' | 'aborted' | 'crashed'
  | 'unknown_tool' | 'invalid_arguments' | 'overloaded';

/** One tool call's outcome as the loop reports it (images are listed by media type, never carried). */
export interface ToolCallOutcome {
  readonly callId: string;
  readonly tool: string;
  readonly ok: boolean;
  readonly content: string;
  readonly error?: { readonly kind: ToolOutcomeKind; readonly message: string } | undefined;
  readonly metadata: Readonly<Record<string, unknown>> | null;
  readonly terminate: boolean;
  readonly durationMs: number;
  /** True when the call never ran (unknown tool, invalid arguments, overload). */
  readonly refused: boolean;
  readonly images: readonly string[];
}

export type ModelErrorKind = 'unreachable' | 'timeout' | 'rate_limited' | 'server_error' | 'bad_response' | 'rejected';

export type AgentEvent =
  | { readonly type: 'step-start'; readonly step: number }
  | { readonly type: 'text-delta'; readonly text: string }
  | { readonly type: 'tool-call-start'; readonly callId: string; readonly tool: string; readonly arguments: string }
  | { readonly type: 'tool-update'; readonly callId: string; readonly text: string }
  | { readonly type: 'tool-result'; readonly result: ToolCallOutcome }
  | { readonly type: 'model-retry'; readonly attempt: number; readonly delayMs: number; readonly kind: ModelErrorKind; readonly message: string }
  | { readonly type: 'run-end'; readonly reason: RunEndReason; readonly steps: number; readonly text: string }
  | { readonly type: 'run-error'; readonly error: { readonly kind: ModelErrorKind | 'internal'; readonly message: string }; readonly steps: number };
