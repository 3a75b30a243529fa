import { z } from '@hono/zod-openapi';
import { TOOL_NAME } from '../registry/validate-declarations.ts';

/** RFC 9457 problem details, as every error response carries them. */
export const Problem = z.object({
  type: z.string().openapi({ example: 'urn:paddock:problem:invalid-body' }),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().openapi({ description: 'What went wrong, precisely enough to fix the request.' }),
  instance: z.string(),
  requestId: z.string().optional(),
  errors: z.array(z.object({ pointer: z.string(), message: z.string() })).optional()
    .openapi({ description: 'Every violation, with the JSON pointer into the request body.' }),
}).openapi('Problem');

export const problemContent = { 'application/problem+json': { schema: Problem } } as const;

/** A tool name in a path. Checked by the route (invoke: 404 when unknown; PUT: 400 when malformed). */
export const ToolNameParam = z.object({
  name: z.string().openapi({ param: { name: 'name', in: 'path' }, description: `Tool name (${TOOL_NAME.source}).`, example: 'weather' }),
});

const PermissionValue = z.union([z.boolean(), z.array(z.string()).max(1000)], { error: 'must be true, false or a list of strings' });

/** Deno-flag-shaped permissions: `true` means all, a list means only those entries. */
export const PermissionSet = z.object({
  net: PermissionValue.optional().openapi({ description: 'Hosts, host:port or IPs (like --allow-net).' }),
  read: PermissionValue.optional().openapi({ description: 'Paths (like --allow-read).' }),
  write: PermissionValue.optional().openapi({ description: 'Paths (like --allow-write).' }),
  env: PermissionValue.optional().openapi({ description: 'Variable names (like --allow-env).' }),
}).strict().openapi('PermissionSet');

const Grants = PermissionSet.optional().openapi({
  description: 'Narrows the call\'s grant (it can never widen it): the grant is what the tool declares ∩ what the key\'s policy allows ∩ this. '
    + 'Omit it for the full grant; a permission left out of a given object is not granted.',
});

export const ToolInfo = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()).openapi({ description: 'JSON Schema (draft 2020-12) of the params.' }),
  kind: z.enum(['read', 'edit', 'write', 'execute', 'web']),
  source: z.enum(['builtin', 'user']),
  permissions: PermissionSet,
}).openapi('Tool');

export const ToolLoadError = z.object({
  file: z.string().openapi({ description: 'The file, relative to the tools folder.' }),
  name: z.string().optional().openapi({ description: 'The tool name, when the file got far enough to declare one.' }),
  message: z.string().openapi({ description: 'Why it did not load (file:line:column for compile errors).' }),
}).openapi('ToolLoadError');

export const ToolList = z.object({
  tools: z.array(ToolInfo),
  errors: z.array(ToolLoadError).openapi({ description: 'Files in the tools folder that failed to load; a failed edit keeps the last good version listed.' }),
}).openapi('ToolList');

export const InvokeRequest = z.object({
  params: z.unknown().optional().openapi({ description: 'The tool\'s params, checked against its schema; omitted means {}.' }),
  grants: Grants,
}).strict().openapi('InvokeRequest');

export const CALL_ERROR_KINDS = ['tool_error', 'not_capable', 'timeout', 'memory_limit', 'output_limit', 'aborted', 'crashed'] as const;

export const InvokeResponse = z.object({
  callId: z.string(),
  tool: z.string(),
  ok: z.boolean().openapi({ description: 'False when the tool failed: a failure is a result (200), never an HTTP error.' }),
  content: z.string(),
  error: z.object({ kind: z.enum(CALL_ERROR_KINDS), message: z.string() }).optional(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  durationMs: z.number(),
}).openapi('InvokeResult');

export type InvokeResponseBody = z.infer<typeof InvokeResponse>;

export const ExecRequest = z.object({
  code: z.string().min(1).openapi({ description: 'The body of an async function: `await` works at the top level, and the value it returns is the result.' }),
  language: z.enum(['ts', 'js']).optional().openapi({ description: 'Defaults to "ts".' }),
  grants: PermissionSet.optional().openapi({ description: 'Capabilities for the snippet, within the key\'s policy. None unless asked for.' }),
  timeoutMs: z.number().int().min(1).max(900_000).optional().openapi({ description: 'Wall-time budget; it can only lower the operator\'s limit.' }),
}).strict().openapi('ExecRequest');

export const ExecResponse = z.object({
  ok: z.boolean(),
  result: z.unknown().openapi({ description: 'The snippet\'s result as JSON (null when it failed).' }),
  logs: z.array(z.object({ level: z.string(), text: z.string() })).openapi({ description: 'console output, in order.' }),
  error: z.object({ kind: z.string(), message: z.string() }).optional(),
}).openapi('ExecResult');

export const WriteToolRequest = z.object({
  source: z.string().openapi({ description: 'The module source (TypeScript), exporting name, description, parameters, permissions and a default execute.' }),
}).strict().openapi('WriteToolRequest');

export const WriteToolReport = z.object({
  name: z.string(),
  file: z.string(),
  created: z.boolean(),
  permissions: PermissionSet,
  addedPermissions: PermissionSet.openapi({ description: 'What this version declares that the previous one did not: a widened grant is visible here.' }),
  removedPermissions: PermissionSet,
}).openapi('WriteToolReport');

export const ReloadReport = z.object({
  added: z.array(z.string()),
  updated: z.array(z.string()),
  removed: z.array(z.string()),
  unchanged: z.array(z.string()),
  errors: z.array(ToolLoadError),
  durationMs: z.number(),
}).openapi('ReloadReport');
