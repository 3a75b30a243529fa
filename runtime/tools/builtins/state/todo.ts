import type { BuiltinTool } from '../../contract.ts';
import { TODO_STATUSES } from './contract.ts';
import type { SessionStateStore, TodoItem, TodoStatus } from './contract.ts';
import { failed, needsSession, ok } from './shared.ts';

export const MAX_TODO_ITEMS = 100;
const MAX_CONTENT = 500;
const MAX_NOTE = 1000;

interface TodoParams {
  action: 'set' | 'update' | 'read';
  items?: { content: string; status?: TodoStatus }[];
  id?: number;
  status?: TodoStatus;
  content?: string;
  note?: string;
}

export function todoTool(state: SessionStateStore): BuiltinTool {
  return {
    name: 'todo',
    description: 'Your task list for this session: `set` replaces the whole list, `update` changes one item (status, text, note), `read` shows it. '
      + 'Statuses: pending, in_progress, done, failed, skipped. Use it for any task of more than two steps and keep one item in_progress.',
    kind: 'read',
    mode: 'sequential',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['set', 'update', 'read'], description: 'What to do.' },
        items: {
          type: 'array', maxItems: MAX_TODO_ITEMS, description: 'For set: the whole list, in order.',
          items: {
            type: 'object', additionalProperties: false, required: ['content'],
            properties: { content: { type: 'string', minLength: 1, maxLength: MAX_CONTENT }, status: { type: 'string', enum: [...TODO_STATUSES] } },
          },
        },
        id: { type: 'integer', minimum: 1, description: 'For update: the item number.' },
        status: { type: 'string', enum: [...TODO_STATUSES], description: 'For update: the new status.' },
        content: { type: 'string', minLength: 1, maxLength: MAX_CONTENT, description: 'For update: new text for the item.' },
        note: { type: 'string', maxLength: MAX_NOTE, description: 'For update: a note (why it failed, what was found).' },
      },
      required: ['action'],
      additionalProperties: false,
    },
    execute(params, context) {
      if (context.sessionId === null) return Promise.resolve(needsSession('todo'));
      const sessionId = context.sessionId;
      const input = params as TodoParams;
      switch (input.action) {
        case 'read':
          return Promise.resolve(render(state.todos(sessionId)));
        case 'set': {
          if (input.items === undefined) return Promise.resolve(failed('todo set needs "items": the whole list, e.g. [{ "content": "Read the spec" }].'));
          const items = state.setTodos(sessionId, input.items.map((item) => ({ content: item.content, status: item.status ?? 'pending' })));
          return Promise.resolve(render(items));
        }
        case 'update': {
          if (input.id === undefined) return Promise.resolve(failed('todo update needs "id", the item number (todo read shows them).'));
          if (input.status === undefined && input.content === undefined && input.note === undefined) {
            return Promise.resolve(failed('todo update needs something to change: "status", "content" or "note".'));
          }
          const updated = state.updateTodo(sessionId, input.id, { status: input.status, content: input.content, note: input.note });
          if (updated === undefined) {
            const count = state.todos(sessionId).length;
            return Promise.resolve(failed(`There is no item ${input.id}; the list has ${count === 0 ? 'no items (use todo set)' : `items 1 to ${count}`}.`));
          }
          return Promise.resolve(render(state.todos(sessionId)));
        }
      }
    },
  };
}

const MARK: Record<TodoStatus, string> = { pending: ' ', in_progress: '>', done: 'x', failed: '!', skipped: '-' };

export function render(items: readonly TodoItem[]) {
  if (items.length === 0) return ok('The todo list is empty.', { todo: [] });
  const done = items.filter((item) => item.status === 'done').length;
  const lines = items.map((item) => `${item.id}. [${MARK[item.status]}] ${item.content} (${item.status})${item.note === null ? '' : ` — ${item.note}`}`);
  return ok(`Todo (${done} of ${items.length} done):\n${lines.join('\n')}`, { todo: items });
}
