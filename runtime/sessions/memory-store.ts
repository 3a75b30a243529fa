import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { MemoryEntry, MemoryHit, MemoryStore as MemoryStoreContract } from '../tools/builtins/state/contract.ts';
import { integer, text, timestamp } from './database.ts';
import type { Row } from './database.ts';

/**
 * Long-term memory: one scope per profile, searched with SQLite FTS5 and ranked by bm25. A query is
 * taken as plain words (any FTS syntax in it is neutralised), matching any of them, best first.
 */
export class MemoryStore implements MemoryStoreContract {
  readonly #insert: StatementSync;
  readonly #get: StatementSync;
  readonly #delete: StatementSync;
  readonly #search: StatementSync;
  readonly #count: StatementSync;

  constructor(db: DatabaseSync) {
    this.#insert = db.prepare('INSERT INTO memories (scope, content, tags, created_at) VALUES (?, ?, ?, ?) RETURNING id');
    this.#get = db.prepare('SELECT id, content, tags, created_at FROM memories WHERE id = ?');
    this.#delete = db.prepare('DELETE FROM memories WHERE scope = ? AND id = ?');
    // Tags weigh double: a memory tagged with a word is about it.
    this.#search = db.prepare(`SELECT m.id, m.content, m.tags, m.created_at, snippet(memories_fts, 0, '[', ']', '…', 16) AS snippet
      FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
      WHERE memories_fts MATCH ? AND m.scope = ?
      ORDER BY bm25(memories_fts, 1.0, 2.0), m.id DESC LIMIT ?`);
    this.#count = db.prepare('SELECT COUNT(*) AS n FROM memories WHERE scope = ?');
  }

  save(scope: string, content: string, tags: readonly string[]): MemoryEntry {
    const row = this.#insert.get(scope, content, tags.join(' '), timestamp());
    const saved = this.#get.get(integer(row ?? {}, 'id'));
    if (saved === undefined) throw new Error('a saved memory vanished right after it was written');
    return toEntry(saved);
  }

  search(scope: string, query: string, limit: number): MemoryHit[] {
    const match = ftsQuery(query);
    if (match === undefined) return [];
    return this.#search.all(match, scope, limit).map((row) => ({ ...toEntry(row), snippet: text(row, 'snippet') }));
  }

  forget(scope: string, id: number): boolean {
    return Number(this.#delete.run(scope, id).changes) > 0;
  }

  count(scope: string): number {
    return integer(this.#count.get(scope) ?? {}, 'n');
  }
}

/** Words of the query, each quoted (so `AND`, `*`, `"` or `:` are just text) and prefix-matched, OR-ed. */
export function ftsQuery(query: string): string | undefined {
  const words = query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const unique = [...new Set(words)].slice(0, 32);
  return unique.length === 0 ? undefined : unique.map((word) => `"${word}"*`).join(' OR ');
}

function toEntry(row: Row): MemoryEntry {
  const tags = text(row, 'tags');
  return { id: integer(row, 'id'), content: text(row, 'content'), tags: tags === '' ? [] : tags.split(' '), createdAt: text(row, 'created_at') };
}
