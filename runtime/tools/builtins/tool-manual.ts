import type { BuiltinTool } from '../contract.ts';
import { errorMessage, failure, stringParam, success } from './tool-results.ts';

/** tool_manual: manuals/<name>.md when the operator or the project wrote one, else one generated from the schema. */
export const toolManual: BuiltinTool = {
  name: 'tool_manual',
  description:
    'Read the manual of a tool: what it does, its parameters, examples and limits. ' +
    'Use it before calling a tool you have not used yet, after an error about its parameters, ' +
    'and read tool_manual {"name":"write_tool"} (the tool module format with a complete example) before writing a tool.',
  parameters: {
    type: 'object',
    properties: { name: { type: 'string', minLength: 1, description: 'The tool whose manual to read (list_tools shows every name).' } },
    required: ['name'],
    additionalProperties: false,
  },
  kind: 'read',
  mode: 'parallel',
  async execute(params, context) {
    const name = stringParam(params, 'name') ?? '';
    let manual: string | undefined;
    try {
      manual = await context.host.manual(name);
    } catch (error) {
      return failure(`The manual of "${name}" could not be read: ${errorMessage(error)}. Try again, or use list_tools for its description.`);
    }
    if (manual === undefined) {
      const names = context.host.listTools().map((tool) => tool.name);
      return failure(`There is no tool named "${name}". Available tools: ${names.join(', ') || '(none)'}.`);
    }
    return success(manual, { name });
  },
};
