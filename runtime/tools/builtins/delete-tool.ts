import type { BuiltinTool } from '../contract.ts';
import { errorMessage, failure, refuseWithoutAdmin, stringParam, success } from './tool-results.ts';

/** delete_tool: removes a user tool's file and the tool; built-ins are never removed. */
export const deleteTool: BuiltinTool = {
  name: 'delete_tool',
  description:
    'Delete a user tool: removes its file from the tools folder and stops offering it (calls already running finish normally). ' +
    'Built-in tools cannot be deleted. Use it for tools that are wrong or no longer needed; to change a tool, use write_tool instead.',
  parameters: {
    type: 'object',
    properties: { name: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'The user tool to delete.' } },
    required: ['name'],
    additionalProperties: false,
  },
  kind: 'write',
  mode: 'sequential',
  async execute(params, context) {
    const refused = refuseWithoutAdmin(context, 'delete_tool');
    if (refused !== undefined) return refused;
    const name = stringParam(params, 'name') ?? '';
    const tools = context.host.listTools();
    const tool = tools.find((candidate) => candidate.name === name);
    if (tool === undefined) {
      const userTools = tools.filter((candidate) => candidate.source === 'user').map((candidate) => candidate.name);
      return failure(`There is no tool named "${name}", so nothing was deleted. User tools: ${userTools.join(', ') || '(none)'}.`);
    }
    if (tool.source === 'builtin') return failure(`"${name}" is a built-in tool; built-ins cannot be deleted. Nothing was changed.`);
    try {
      await context.host.deleteTool(name);
    } catch (error) {
      return failure(`delete_tool could not delete "${name}": ${errorMessage(error)}. Call list_tools to see whether it is still offered.`);
    }
    return success(`Deleted the user tool "${name}": its file is gone and it is no longer offered. Calls already running finish normally.`, { name, deleted: true });
  },
};
