import type { BuiltinTool } from '../../contract.ts';
import type { ScratchpadSection, SessionStateStore } from './contract.ts';
import { failed, needsSession, ok } from './shared.ts';

export const MAX_SECTION_CHARS = 64 * 1024;
export const MAX_SECTIONS = 32;
const SECTION_NAME = '^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$';

interface ScratchpadParams {
  action: 'write' | 'append' | 'read' | 'clear';
  section?: string;
  content?: string;
}

export function scratchpadTool(state: SessionStateStore): BuiltinTool {
  return {
    name: 'scratchpad',
    description: 'Named notes for this session that survive long conversations: `write` replaces a section, `append` adds a line to it, '
      + '`read` shows one section (or all), `clear` removes one (or all). Keep findings, plans and intermediate results here.',
    kind: 'read',
    mode: 'sequential',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['write', 'append', 'read', 'clear'] },
        section: { type: 'string', pattern: SECTION_NAME, description: 'The section name, e.g. "plan" or "findings".' },
        content: { type: 'string', maxLength: MAX_SECTION_CHARS, description: 'For write and append.' },
      },
      required: ['action'],
      additionalProperties: false,
    },
    execute(params, context) {
      if (context.sessionId === null) return Promise.resolve(needsSession('scratchpad'));
      const sessionId = context.sessionId;
      const { action, section, content } = params as ScratchpadParams;
      switch (action) {
        case 'read': {
          const sections = state.sections(sessionId);
          if (section === undefined) return Promise.resolve(renderAll(sections));
          const found = sections.find((candidate) => candidate.name === section);
          if (found === undefined) return Promise.resolve(failed(`There is no section "${section}". Sections: ${names(sections)}.`));
          return Promise.resolve(ok(found.content, { section: found.name, chars: found.content.length }));
        }
        case 'write':
        case 'append': {
          if (section === undefined || content === undefined) return Promise.resolve(failed(`scratchpad ${action} needs "section" and "content".`));
          const sections = state.sections(sessionId);
          const existing = sections.find((candidate) => candidate.name === section);
          if (existing === undefined && sections.length >= MAX_SECTIONS) {
            return Promise.resolve(failed(`The scratchpad holds at most ${MAX_SECTIONS} sections; clear one first. Sections: ${names(sections)}.`));
          }
          const size = action === 'write' ? content.length : (existing?.content.length ?? 0) + 1 + content.length;
          if (size > MAX_SECTION_CHARS) {
            return Promise.resolve(failed(`Section "${section}" would hold ${size} characters; the limit is ${MAX_SECTION_CHARS}. Summarise it with write instead.`));
          }
          const written = action === 'write' ? state.writeSection(sessionId, section, content) : state.appendSection(sessionId, section, content);
          return Promise.resolve(ok(`Section "${written.name}" now holds ${written.content.length} characters.`, { section: written.name, chars: written.content.length }));
        }
        case 'clear': {
          const removed = state.clearSections(sessionId, section);
          if (section !== undefined && removed === 0) return Promise.resolve(failed(`There is no section "${section}".`));
          return Promise.resolve(ok(section === undefined ? `Cleared ${removed} section${removed === 1 ? '' : 's'}.` : `Cleared section "${section}".`, { removed }));
        }
      }
    },
  };
}

function names(sections: readonly ScratchpadSection[]): string {
  return sections.length === 0 ? '(none)' : sections.map((section) => `"${section.name}"`).join(', ');
}

function renderAll(sections: readonly ScratchpadSection[]) {
  if (sections.length === 0) return ok('The scratchpad is empty.', { sections: [] });
  const text = sections.map((section) => `## ${section.name}\n${section.content}`).join('\n\n');
  return ok(text, { sections: sections.map((section) => ({ name: section.name, chars: section.content.length })) });
}
