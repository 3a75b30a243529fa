import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { ParamViolation } from '../coordinator/coordinator.ts';
import type { InvokeResult, ToolDescription, ToolKind } from '../tools/contract.ts';

/**
 * Hints a client may use to decide what to confirm with its user. They follow from the tool's
 * kind (for user tools, derived from what the tool may touch), and only ever claim "harmless"
 * where the kind guarantees it: everything else keeps the spec's cautious defaults.
 */
const ANNOTATIONS: Readonly<Record<ToolKind, ToolAnnotations>> = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  // A web tool may send anything to the hosts it is granted, so it is not read-only.
  web: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  edit: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  write: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  execute: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
};

/** A registry entry as MCP's tools/list shows it: the parameters schema is the input schema. */
export function toMcpTool(tool: ToolDescription): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.parameters as Tool['inputSchema'],
    annotations: ANNOTATIONS[tool.kind],
    _meta: { 'paddock/kind': tool.kind, 'paddock/source': tool.source, 'paddock/permissions': tool.permissions },
  };
}

/**
 * A finished call as a CallToolResult. Every failure of the tool itself (its own error, a denied
 * capability, a limit, a crash) is a result with `isError: true` and the message as its text, so
 * the model can read it and adapt; the error kind travels in `_meta`.
 */
export function toCallToolResult(result: InvokeResult): CallToolResult {
  const meta = {
    'paddock/callId': result.callId,
    'paddock/durationMs': result.durationMs,
    ...(result.metadata === null ? {} : { 'paddock/metadata': result.metadata }),
    ...(result.terminate ? { 'paddock/terminate': true } : {}),
  };
  if (result.ok) return { content: [{ type: 'text', text: result.content }], _meta: meta };
  const error = result.error ?? { kind: 'tool_error', message: result.content };
  return {
    content: [{ type: 'text', text: error.message || result.content }],
    isError: true,
    _meta: { ...meta, 'paddock/error': { kind: error.kind, ...(error.name === undefined ? {} : { name: error.name }) } },
  };
}

/**
 * Arguments that break the tool's schema. MCP (2025-11-25) reports input validation as a tool
 * execution error, not a protocol error, so the model sees every violation and can correct itself.
 */
export function invalidParamsResult(message: string, violations: readonly ParamViolation[]): CallToolResult {
  return {
    content: [{ type: 'text', text: message }],
    isError: true,
    _meta: { 'paddock/error': { kind: 'invalid_params', violations: violations.map((violation) => ({ ...violation })) } },
  };
}
