import type { Caller } from '../auth/keys.ts';

/**
 * One contract for every tool, built-in (trusted, host-side, in runtime/) or user (a sandboxed
 * module from tools/). The agent loop, HTTP, MCP and the CLI see only this.
 */

export const TOOL_KINDS = ['read', 'edit', 'write', 'execute', 'web'] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

/** Parallel tools may run concurrently within one agent step; sequential ones run in order. */
export type ExecutionMode = 'parallel' | 'sequential';

export type JsonSchema = Readonly<Record<string, unknown>>;

/** Deno-flag-shaped permissions (true = all, a list = only those). */
export interface PermissionSet {
  readonly net?: boolean | readonly string[];
  readonly read?: boolean | readonly string[];
  readonly write?: boolean | readonly string[];
  readonly env?: boolean | readonly string[];
}

export interface ToolResult {
  readonly content: string;
  readonly isError: boolean;
  readonly metadata: Readonly<Record<string, unknown>> | null;
  /** Asks the agent loop to stop after this step. */
  readonly terminate: boolean;
}

/** What the coordinator lends a built-in tool that must reach upward (reload, write, exec, ...). */
export interface ToolHost {
  reloadTools(): Promise<ReloadReport>;
  writeTool(name: string, source: string): Promise<WriteToolReport>;
  deleteTool(name: string): Promise<void>;
  listTools(): readonly ToolDescription[];
  /** Files in the tools folder that failed to load (their last good version, if any, still serves). */
  loadErrors(): readonly ToolLoadError[];
  /** Runs a tool through the same choke point as any other call (test_tool). */
  invoke(name: string, params: unknown, signal?: AbortSignal): Promise<InvokeResult>;
  exec(code: string, language: 'ts' | 'js', signal?: AbortSignal): Promise<ExecResult>;
  manual(name: string): Promise<string | undefined>;
}

export interface ToolCallContext {
  readonly callId: string;
  readonly sessionId: string | null;
  readonly caller: Caller;
  readonly signal: AbortSignal;
  update(text: string): void;
  readonly host: ToolHost;
}

export interface BuiltinTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly kind: ToolKind;
  readonly mode: ExecutionMode;
  /** What the tool can touch, for display (built-ins enforce their own policy-driven limits). */
  readonly permissions?: PermissionSet;
  /** A tool whose backing service is absent is not offered. */
  isAvailable?(): boolean | Promise<boolean>;
  execute(params: unknown, context: ToolCallContext): Promise<ToolResult | string>;
}

/** One immutable version of a user tool; in-flight calls keep the version they started with. */
export interface UserToolVersion {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly kind: ToolKind;
  readonly mode: ExecutionMode;
  readonly permissions: PermissionSet;
  /** The tool's file, relative to the tools folder. */
  readonly file: string;
  readonly bundle: { readonly code: string; readonly hash: string; readonly filename: string; readonly inputs: readonly string[] };
  readonly loadedAt: string;
}

export type ToolSource = 'builtin' | 'user';

/** How a tool is listed (GET /v1/tools, list_tools, MCP tools/list). */
export interface ToolDescription {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly kind: ToolKind;
  readonly mode: ExecutionMode;
  readonly source: ToolSource;
  readonly permissions: PermissionSet;
}

export interface ToolLoadError {
  readonly file: string;
  /** The tool name, when the file got far enough to declare one. */
  readonly name?: string | undefined;
  readonly message: string;
}

export interface ReloadReport {
  readonly added: readonly string[];
  readonly updated: readonly string[];
  readonly removed: readonly string[];
  readonly unchanged: readonly string[];
  readonly errors: readonly ToolLoadError[];
  readonly durationMs: number;
}

export interface WriteToolReport {
  readonly name: string;
  readonly file: string;
  readonly created: boolean;
  readonly permissions: PermissionSet;
  /** Permissions this version declares that the previous one did not (a widened grant is visible). */
  readonly addedPermissions: PermissionSet;
  readonly removedPermissions: PermissionSet;
}

export type CallErrorKindName = 'tool_error' | 'not_capable' | 'timeout' | 'memory_limit' | 'output_limit' | 'aborted' | 'crashed';

export interface InvokeResult {
  readonly callId: string;
  readonly tool: string;
  readonly ok: boolean;
  readonly content: string;
  readonly error?: { readonly kind: CallErrorKindName; readonly message: string; readonly name?: string | undefined } | undefined;
  readonly metadata: Readonly<Record<string, unknown>> | null;
  readonly terminate: boolean;
  readonly durationMs: number;
}

export interface ExecResult {
  readonly ok: boolean;
  readonly result: unknown;
  readonly logs: readonly { readonly level: string; readonly text: string }[];
  readonly error?: { readonly kind: string; readonly message: string; readonly name?: string | undefined } | undefined;
  readonly durationMs: number;
}
