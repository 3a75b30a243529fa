import type { BuiltinTool } from '../contract.ts';
import { codeExec } from './code-exec.ts';
import { deleteTool } from './delete-tool.ts';
import { listTools } from './list-tools.ts';
import { reloadTools } from './reload-tools.ts';
import { testTool } from './test-tool.ts';
import { toolManual } from './tool-manual.ts';
import { writeTool } from './write-tool.ts';

/** Every built-in tool, in the order they are listed. Each checks its own availability. */
export function builtinTools(): BuiltinTool[] {
  return [
    // Tool management (SPEC §4, §7): the registry seen and changed from inside a session.
    listTools, toolManual, writeTool, deleteTool, reloadTools, testTool,
    // Running code: a fresh isolate with no grant, as POST /v1/exec.
    codeExec,
  ];
}
