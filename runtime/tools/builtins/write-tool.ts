import { ToolSourceError } from '../../registry/loader.ts';
import type { BuiltinTool, WriteToolReport } from '../contract.ts';
import { errorMessage, failure, formatPermissions, hasPermissions, refuseWithoutAdmin, stringParam, success } from './tool-results.ts';

/**
 * write_tool: the loader checks the exports and compiles in the sandbox before anything is
 * written, refuses built-in names and names outside ^[a-z][a-z0-9_]{0,63}$ (so the file is always
 * tools/<name>.ts), then swaps the new version in. The result puts a widened permission first.
 */
export const writeTool: BuiltinTool = {
  name: 'write_tool',
  description:
    'Create or replace a user tool: writes tools/<name>.ts from the full module source and loads it, so the tool answers calls right away. ' +
    'The source is checked first (it must compile and export name, description, parameters, permissions and a default execute function); ' +
    'nothing is written when a check fails, and the previous version keeps serving. ' +
    'Read tool_manual {"name":"write_tool"} for the module format and a complete example before writing a tool. ' +
    'The result states the permissions the tool declares and any it gained since its previous version.',
  parameters: {
    type: 'object',
    properties: {
      name: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'The tool name; must equal `export const name` in the source. Lower-case letters, digits and _.' },
      source: { type: 'string', minLength: 1, description: 'The complete TypeScript module (it replaces the whole file).' },
    },
    required: ['name', 'source'],
    additionalProperties: false,
  },
  kind: 'write',
  mode: 'sequential',
  async execute(params, context) {
    const refused = refuseWithoutAdmin(context, 'write_tool');
    if (refused !== undefined) return refused;
    const name = stringParam(params, 'name') ?? '';
    const source = stringParam(params, 'source') ?? '';
    let report: WriteToolReport;
    try {
      report = await context.host.writeTool(name, source);
    } catch (error) {
      if (error instanceof ToolSourceError) {
        return failure([
          `write_tool refused "${name}": nothing was written${context.host.listTools().some((tool) => tool.name === name && tool.source === 'user') ? ' and the previous version keeps serving' : ''}.`,
          'Problems:',
          ...error.problems.map((problem) => `- ${problem}`),
          nextStep(error.problems),
        ].join('\n'), { name, problems: error.problems });
      }
      return failure(`write_tool could not write "${name}": ${errorMessage(error)}. Nothing may have changed; call list_tools to see what is live, then try again.`);
    }
    const described = context.host.listTools().find((tool) => tool.name === report.name);
    const widened = hasPermissions(report.addedPermissions);
    const lines = [
      `${report.created ? 'Created' : 'Replaced'} tools/${report.file}: "${report.name}"${described === undefined ? '' : ` (kind ${described.kind})`} is live and answers calls now.`,
    ];
    if (report.created) {
      lines.push(widened
        ? `PERMISSIONS REQUESTED by this new tool: ${formatPermissions(report.permissions)}.`
        : 'Declared permissions: none (no network, files or environment).');
    } else {
      if (widened) lines.push(`PERMISSIONS WIDENED: this version declares more than the previous one: + ${formatPermissions(report.addedPermissions)}.`);
      if (hasPermissions(report.removedPermissions)) lines.push(`Permissions dropped since the previous version: - ${formatPermissions(report.removedPermissions)}.`);
      if (!widened && !hasPermissions(report.removedPermissions)) lines.push('Permissions unchanged since the previous version.');
      lines.push(`Declared permissions now: ${formatPermissions(report.permissions)}.`);
    }
    if (hasPermissions(report.permissions)) lines.push("Each call is granted only what the caller's policy allows of these.");
    lines.push(`Check it with test_tool {"name":"${report.name}", "params": {...}, "expect": {...}}.`);
    return success(lines.join('\n'), {
      name: report.name, file: report.file, created: report.created, kind: described?.kind ?? null,
      permissions: report.permissions, addedPermissions: report.addedPermissions, removedPermissions: report.removedPermissions, widened,
    });
  },
};

function nextStep(problems: readonly string[]): string {
  if (problems.some((problem) => problem.includes('built-in'))) return 'Choose a name that no built-in tool uses (list_tools shows them all) and write again.';
  if (problems.some((problem) => problem.includes('already used by'))) return 'Another file already defines a tool of that name: choose another name, or delete_tool it first.';
  return 'Fix every problem above and call write_tool again with the whole corrected source (tool_manual {"name":"write_tool"} has the format and an example).';
}
