import type { RegisteredTool } from '../registry/registry.ts';
import { describe } from '../registry/registry.ts';

/** A manual built from a tool's schema, for tools without manuals/<name>.md. */
export function generatedManual(entry: RegisteredTool): string {
  const tool = describe(entry);
  const schema = tool.parameters as { properties?: Record<string, { type?: unknown; description?: unknown; enum?: unknown }>; required?: unknown };
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const lines = [`# ${tool.name}`, '', tool.description, '', `Kind: ${tool.kind}. Source: ${tool.source}.`, '', '## Parameters', ''];
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) lines.push('None.');
  for (const [name, property] of properties) {
    const type = typeof property.type === 'string' ? property.type : 'any';
    const choices = Array.isArray(property.enum) ? ` One of: ${property.enum.map((value) => JSON.stringify(value)).join(', ')}.` : '';
    const description = typeof property.description === 'string' ? ` ${property.description}` : '';
    lines.push(`- \`${name}\` (${type}${required.has(name) ? ', required' : ''}):${description}${choices}`);
  }
  const permissions = Object.entries(tool.permissions);
  lines.push('', '## Permissions', '', permissions.length === 0 ? 'None.' : permissions.map(([key, value]) => `- ${key}: ${JSON.stringify(value)}`).join('\n'));
  lines.push('', '## Schema', '', '```json', JSON.stringify(tool.parameters, null, 2), '```', '');
  return lines.join('\n');
}
