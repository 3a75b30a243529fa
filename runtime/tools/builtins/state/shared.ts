import type { ToolResult } from '../../contract.ts';

/** A successful result with optional structured metadata. */
export function ok(content: string, metadata: Record<string, unknown> | null = null): ToolResult {
  return { content, isError: false, metadata, terminate: false };
}

/** A failure the model reads as a tool error (it says what to do instead). */
export function failed(message: string): ToolResult {
  return { content: message, isError: true, metadata: null, terminate: false };
}

/** The state tools keep per-session state: outside a session run there is none to use. */
export function needsSession(tool: string): ToolResult {
  return failed(`${tool} works only inside a session (POST /v1/sessions/{id}/messages); this call has no session.`);
}
