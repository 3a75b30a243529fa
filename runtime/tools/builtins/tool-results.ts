import { hasScope } from '../../auth/keys.ts';
import type { PermissionSet, ToolCallContext, ToolResult } from '../contract.ts';

/** Shared shapes for the management built-ins: results, permission text, previews, scope checks. */

export function success(content: string, metadata: Record<string, unknown> | null = null): ToolResult {
  return { content, isError: false, metadata, terminate: false };
}

/** A failure the model can act on: what went wrong, then what to do next. */
export function failure(content: string, metadata: Record<string, unknown> | null = null): ToolResult {
  return { content, isError: true, metadata, terminate: false };
}

const PERMISSION_KEYS = ['net', 'read', 'write', 'env'] as const;

/** `net: a.com, b.com; env: KEY` (`all` for true), or `none`. */
export function formatPermissions(permissions: PermissionSet): string {
  const parts: string[] = [];
  for (const key of PERMISSION_KEYS) {
    const value = permissions[key];
    if (value === true) parts.push(`${key}: all`);
    else if (Array.isArray(value) && value.length > 0) parts.push(`${key}: ${value.join(', ')}`);
  }
  return parts.length === 0 ? 'none' : parts.join('; ');
}

export function hasPermissions(permissions: PermissionSet): boolean {
  return PERMISSION_KEYS.some((key) => {
    const value = permissions[key];
    return value === true || (Array.isArray(value) && value.length > 0);
  });
}

/**
 * A long text cut for a model's context: the head and the tail, with how much was left out in
 * between (the end of an output often holds the error or the total).
 */
export function preview(text: string, limit = 2000): string {
  if (text.length <= limit) return text;
  const head = Math.floor(limit * 0.75);
  const tail = limit - head;
  return `${text.slice(0, head)}\n… [${text.length - head - tail} characters omitted] …\n${text.slice(text.length - tail)}`;
}

/** Managing tools (write, delete, reload) needs the admin scope, as the HTTP routes that do the same. */
export function refuseWithoutAdmin(context: ToolCallContext, tool: string): ToolResult | undefined {
  if (hasScope(context.caller, 'admin')) return undefined;
  return failure(`${tool} manages the tool registry and needs an API key with the "admin" scope; the key "${context.caller.name}" has ${context.caller.scopes.join(', ') || 'no scopes'}. Ask the operator to run it, or use a key with the admin scope.`);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A JSON object's property, typed; the coordinator validated params against the schema already. */
export function stringParam(params: unknown, key: string): string | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  const value = (params as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}
