import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { ScratchpadSection, SessionStateStore, TodoItem, TodoStatus } from '../tools/builtins/state/contract.ts';
import { integer, optionalText, text, timestamp, transaction } from './database.ts';
import type { Row } from './database.ts';

/** The todo list and scratchpad of each session (removed with it). */
export class StateStore implements SessionStateStore {
  readonly #db: DatabaseSync;
  readonly #profile: StatementSync;
  readonly #todos: StatementSync;
  readonly #todo: StatementSync;
  readonly #clearTodos: StatementSync;
  readonly #insertTodo: StatementSync;
  readonly #updateTodo: StatementSync;
  readonly #sections: StatementSync;
  readonly #section: StatementSync;
  readonly #upsertSection: StatementSync;
  readonly #clearSection: StatementSync;
  readonly #clearAllSections: StatementSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#profile = db.prepare('SELECT profile FROM sessions WHERE id = ?');
    this.#todos = db.prepare('SELECT id, content, status, note FROM todos WHERE session_id = ? ORDER BY id');
    this.#todo = db.prepare('SELECT id, content, status, note FROM todos WHERE session_id = ? AND id = ?');
    this.#clearTodos = db.prepare('DELETE FROM todos WHERE session_id = ?');
    this.#insertTodo = db.prepare('INSERT INTO todos (session_id, id, content, status, note, updated_at) VALUES (?, ?, ?, ?, NULL, ?)');
    this.#updateTodo = db.prepare(`UPDATE todos SET content = COALESCE(?, content), status = COALESCE(?, status), note = COALESCE(?, note), updated_at = ?
      WHERE session_id = ? AND id = ?`);
    this.#sections = db.prepare('SELECT name, content, updated_at FROM scratchpad_sections WHERE session_id = ? ORDER BY name');
    this.#section = db.prepare('SELECT name, content, updated_at FROM scratchpad_sections WHERE session_id = ? AND name = ?');
    this.#upsertSection = db.prepare(`INSERT INTO scratchpad_sections (session_id, name, content, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (session_id, name) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`);
    this.#clearSection = db.prepare('DELETE FROM scratchpad_sections WHERE session_id = ? AND name = ?');
    this.#clearAllSections = db.prepare('DELETE FROM scratchpad_sections WHERE session_id = ?');
  }

  profileOf(sessionId: string): string | undefined {
    const row = this.#profile.get(sessionId);
    return row === undefined ? undefined : text(row, 'profile');
  }

  todos(sessionId: string): TodoItem[] {
    return this.#todos.all(sessionId).map(toTodo);
  }

  setTodos(sessionId: string, items: readonly { content: string; status: TodoStatus }[]): TodoItem[] {
    const now = timestamp();
    transaction(this.#db, () => {
      this.#clearTodos.run(sessionId);
      items.forEach((item, index) => { this.#insertTodo.run(sessionId, index + 1, item.content, item.status, now); });
    });
    return this.todos(sessionId);
  }

  updateTodo(sessionId: string, id: number, change: { content?: string | undefined; status?: TodoStatus | undefined; note?: string | undefined }): TodoItem | undefined {
    this.#updateTodo.run(change.content ?? null, change.status ?? null, change.note ?? null, timestamp(), sessionId, id);
    const row = this.#todo.get(sessionId, id);
    return row === undefined ? undefined : toTodo(row);
  }

  sections(sessionId: string): ScratchpadSection[] {
    return this.#sections.all(sessionId).map(toSection);
  }

  writeSection(sessionId: string, name: string, content: string): ScratchpadSection {
    this.#upsertSection.run(sessionId, name, content, timestamp());
    return this.#readSection(sessionId, name);
  }

  appendSection(sessionId: string, name: string, content: string): ScratchpadSection {
    return transaction(this.#db, () => {
      const row = this.#section.get(sessionId, name);
      const previous = row === undefined ? '' : text(row, 'content');
      const joined = previous === '' || previous.endsWith('\n') ? previous + content : `${previous}\n${content}`;
      return this.writeSection(sessionId, name, joined);
    });
  }

  clearSections(sessionId: string, name?: string): number {
    const result = name === undefined ? this.#clearAllSections.run(sessionId) : this.#clearSection.run(sessionId, name);
    return Number(result.changes);
  }

  #readSection(sessionId: string, name: string): ScratchpadSection {
    const row = this.#section.get(sessionId, name);
    if (row === undefined) throw new Error(`scratchpad section "${name}" vanished right after it was written`);
    return toSection(row);
  }
}

function toTodo(row: Row): TodoItem {
  return { id: integer(row, 'id'), content: text(row, 'content'), status: text(row, 'status') as TodoStatus, note: optionalText(row, 'note') };
}

function toSection(row: Row): ScratchpadSection {
  return { name: text(row, 'name'), content: text(row, 'content'), updatedAt: text(row, 'updated_at') };
}
