import type { BuiltinTool } from '../../contract.ts';
import type { MemoryStore, SessionStateStore } from './contract.ts';
import { failed, needsSession, ok } from './shared.ts';

const MAX_MEMORY_CHARS = 4_000;
const TAG = '^[A-Za-z0-9_-]{1,32}$';

/**
 * Long-term memory, shared by every session of a profile. Saving and forgetting are kind `edit`:
 * what one session saves steers later ones, so a read-only session (which may be reading untrusted
 * pages) cannot plant memories unless its profile allows these tools by name.
 */
export function memoryTools(state: SessionStateStore, memory: MemoryStore): BuiltinTool[] {
  const scopeOf = (sessionId: string | null): string | undefined => (sessionId === null ? undefined : state.profileOf(sessionId));

  const save: BuiltinTool = {
    name: 'memory_save',
    description: 'Saves a fact for later sessions of this profile (they find it with memory_search). Save durable, verified facts and preferences, one per call, not conversation logs.',
    kind: 'edit',
    mode: 'sequential',
    parameters: {
      type: 'object',
      properties: {
        content: { type: 'string', minLength: 1, maxLength: MAX_MEMORY_CHARS, description: 'The fact, self-contained (it will be read without this conversation).' },
        tags: { type: 'array', maxItems: 10, uniqueItems: true, items: { type: 'string', pattern: TAG }, description: 'Keywords that help find it.' },
      },
      required: ['content'],
      additionalProperties: false,
    },
    execute(params, context) {
      const scope = scopeOf(context.sessionId);
      if (scope === undefined) return Promise.resolve(needsSession('memory_save'));
      const { content, tags = [] } = params as { content: string; tags?: string[] };
      const saved = memory.save(scope, content.trim(), tags);
      return Promise.resolve(ok(`Saved memory #${saved.id}.`, { id: saved.id, scope }));
    },
  };

  const search: BuiltinTool = {
    name: 'memory_search',
    description: 'Searches the memories of this profile by full text (any of the words, best matches first). Search before asking the user something you may have been told before.',
    kind: 'read',
    mode: 'parallel',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 500, description: 'Words to look for.' },
        limit: { type: 'integer', minimum: 1, maximum: 20, description: 'How many results at most (default 5).' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    execute(params, context) {
      const scope = scopeOf(context.sessionId);
      if (scope === undefined) return Promise.resolve(needsSession('memory_search'));
      const { query, limit = 5 } = params as { query: string; limit?: number };
      const hits = memory.search(scope, query, limit);
      if (hits.length === 0) return Promise.resolve(ok(`No memory matches "${query}".`, { results: [] }));
      const lines = hits.map((hit) => `#${hit.id}${hit.tags.length === 0 ? '' : ` [${hit.tags.join(', ')}]`} (${hit.createdAt.slice(0, 10)}): ${hit.content}`);
      return Promise.resolve(ok(`${hits.length} ${hits.length === 1 ? 'memory' : 'memories'}, best first:\n${lines.join('\n')}`, {
        results: hits.map((hit) => ({ id: hit.id, tags: hit.tags, createdAt: hit.createdAt })),
      }));
    },
  };

  const forget: BuiltinTool = {
    name: 'memory_forget',
    description: 'Deletes one memory of this profile by its number (from memory_search), e.g. when it is wrong or out of date.',
    kind: 'edit',
    mode: 'sequential',
    parameters: {
      type: 'object',
      properties: { id: { type: 'integer', minimum: 1, description: 'The memory number, as memory_search shows it (#12 is 12).' } },
      required: ['id'],
      additionalProperties: false,
    },
    execute(params, context) {
      const scope = scopeOf(context.sessionId);
      if (scope === undefined) return Promise.resolve(needsSession('memory_forget'));
      const { id } = params as { id: number };
      return Promise.resolve(memory.forget(scope, id)
        ? ok(`Forgot memory #${id}.`, { id })
        : failed(`There is no memory #${id} for this profile. Use memory_search to find the right number.`));
    },
  };

  return [save, search, forget];
}
