import type { BuiltinTool, ToolDescription } from '../contract.ts';
import { formatPermissions, stringParam, success } from './tool-results.ts';

const SOURCES = ['all', 'builtin', 'user'] as const;

/** list_tools: the live registry, one compact line per tool for a model, the full descriptions in metadata. */
export const listTools: BuiltinTool = {
  name: 'list_tools',
  description:
    'List the tools available right now (built-in and user tools), one line each: name, kind, what a user tool may touch, and what it is for. ' +
    'Use it to find a tool for a task, to check that a tool you wrote is live, or to see its permissions. ' +
    'For a tool\'s parameters and usage, call tool_manual.',
  parameters: {
    type: 'object',
    properties: { source: { type: 'string', enum: [...SOURCES], description: 'Only built-in or only user tools. Default: all.' } },
    additionalProperties: false,
  },
  kind: 'read',
  mode: 'parallel',
  execute(params, context) {
    const source = stringParam(params, 'source') ?? 'all';
    const all = context.host.listTools();
    const tools = source === 'all' ? all : all.filter((tool) => tool.source === source);
    const builtins = tools.filter((tool) => tool.source === 'builtin');
    const users = tools.filter((tool) => tool.source === 'user');
    const lines = [`${tools.length} tool${tools.length === 1 ? '' : 's'}: ${builtins.length} built-in, ${users.length} user.`];
    if (builtins.length > 0) lines.push('', 'Built-in:', ...builtins.map(toolLine));
    if (users.length > 0) lines.push('', 'User tools (sandboxed; permissions are what each may be granted, bounded by the caller\'s policy):', ...users.map(toolLine));
    if (source !== 'builtin' && users.length === 0) lines.push('', 'No user tools yet: write one with write_tool.');
    const broken = source === 'builtin' ? [] : context.host.loadErrors();
    if (broken.length > 0) {
      lines.push('', 'Files that failed to load (fix and save, or rewrite with write_tool):', ...broken.map((error) => `- ${error.file}: ${error.message.split('\n')[0] ?? ''}`));
    }
    return Promise.resolve(success(lines.join('\n'), {
      tools: tools.map(({ name, description, kind, mode, source: from, permissions }) => ({ name, description, kind, mode, source: from, permissions })),
      loadErrors: broken.map((error) => ({ ...error })),
    }));
  },
};

function toolLine(tool: ToolDescription): string {
  const permissions = tool.source === 'user' ? ` {${formatPermissions(tool.permissions)}}` : '';
  return `- ${tool.name} [${tool.kind}]${permissions}: ${firstSentence(tool.description)}`;
}

/** The description's first sentence, at most 160 characters: enough to pick a tool. */
export function firstSentence(text: string, limit = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = /[.!?](\s|$)/.exec(flat);
  const sentence = end === null ? flat : flat.slice(0, end.index + 1);
  return sentence.length <= limit ? sentence : `${sentence.slice(0, limit - 1).trimEnd()}…`;
}
