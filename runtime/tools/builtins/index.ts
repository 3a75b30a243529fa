import type { BuiltinTool } from '../contract.ts';

/** Every built-in tool, in the order they are listed. Each checks its own availability. */
export function builtinTools(): BuiltinTool[] {
  return [];
}
