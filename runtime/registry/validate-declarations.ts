import { Ajv2020 } from 'ajv/dist/2020.js';
import { InvalidGrantError, normalizeGrant } from '../../sandbox/grants/index.ts';
import type { ModuleDeclarations } from '../../sandbox/sandbox.ts';

export const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_SCHEMA_BYTES = 64 * 1024;
const MAX_SCHEMA_DEPTH = 32;

export interface ToolDeclarations {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  permissions: Record<string, unknown>;
}

// Schemas are untrusted: no remote $ref loading (no loadSchema), strict keywords, bounded size and depth.
const ajv = new Ajv2020({ strict: true, allErrors: true, validateSchema: true });

/**
 * Checks the four definitions a tool module must export (SPEC §2). Returns every problem, in
 * words an author (often an LLM) can act on, or the checked declarations.
 */
export function validateDeclarations(declared: ModuleDeclarations, cwd: string): { ok: true; declarations: ToolDeclarations } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  const { name, description, parameters, permissions } = declared;
  if (typeof name !== 'string') problems.push('export const name: missing or not a string');
  else if (!TOOL_NAME.test(name)) problems.push(`export const name: "${name}" must match ${TOOL_NAME.source}`);
  if (typeof description !== 'string' || description.trim() === '') problems.push('export const description: missing or empty');
  if (!declared.hasExecute) problems.push('export default: missing, or not a function (execute(params, ctx))');
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
    problems.push('export const parameters: missing, or not a JSON Schema object');
  } else {
    const size = depth(parameters, 0) > MAX_SCHEMA_DEPTH ? Number.POSITIVE_INFINITY : JSON.stringify(parameters).length;
    if (size === Number.POSITIVE_INFINITY) problems.push(`export const parameters: the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
    else if (size > MAX_SCHEMA_BYTES) problems.push(`export const parameters: the schema is ${size} bytes, over the limit of ${MAX_SCHEMA_BYTES}`);
    else if ((parameters as { type?: unknown }).type !== 'object') problems.push('export const parameters: the schema must have "type": "object"');
    else {
      try {
        ajv.compile(parameters);
        ajv.removeSchema(parameters);
      } catch (error) {
        problems.push(`export const parameters: not a valid JSON Schema (draft 2020-12): ${(error as Error).message}`);
      }
    }
  }
  if (permissions !== null && permissions !== undefined) {
    try {
      normalizeGrant(permissions, { cwd });
    } catch (error) {
      if (!(error instanceof InvalidGrantError)) throw error;
      problems.push(`export const permissions: ${error.message}`);
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    declarations: {
      name: name as string,
      description: description as string,
      parameters: parameters as Record<string, unknown>,
      permissions: (permissions ?? {}) as Record<string, unknown>,
    },
  };
}

/** Nesting depth, giving up (returning a value over the limit) as soon as it passes the limit. */
function depth(value: unknown, level: number): number {
  if (typeof value !== 'object' || value === null || level > MAX_SCHEMA_DEPTH) return level;
  let deepest = level + 1;
  for (const child of Object.values(value)) {
    deepest = Math.max(deepest, depth(child, level + 1));
    if (deepest > MAX_SCHEMA_DEPTH) break;
  }
  return deepest;
}
