import { randomUUID } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { ContextMessage, DisplayEntry } from '../agent/messages.ts';
import { integer, optionalText, text, timestamp, transaction } from './database.ts';
import type { Row } from './database.ts';

export interface SessionRecord {
  readonly id: string;
  /** The caller (key name) that created it; only it and admins see it. */
  readonly owner: string;
  readonly profile: string;
  readonly parentId: string | null;
  /** 0 for a session a client created; a sub-agent's is its parent's + 1. */
  readonly depth: number;
  /** Sub-agent sessions: removed when their run ends (and at start, when a crash left one). */
  readonly ephemeral: boolean;
  /** A sub-agent's tools, never wider than its parent's; null means the profile's view. */
  readonly toolLimit: readonly string[] | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface NewSession {
  owner: string;
  profile: string;
  parentId?: string | undefined;
  depth?: number | undefined;
  ephemeral?: boolean | undefined;
  toolLimit?: readonly string[] | undefined;
}

export interface StoredDisplayEntry {
  readonly seq: number;
  readonly at: string;
  readonly entry: DisplayEntry;
}

/** Sessions and their two buffers; every write is one transaction, so a crash leaves a consistent session. */
export class SessionStore {
  readonly #db: DatabaseSync;
  readonly #insert: StatementSync;
  readonly #get: StatementSync;
  readonly #delete: StatementSync;
  readonly #touch: StatementSync;
  readonly #setProfile: StatementSync;
  readonly #listByOwner: StatementSync;
  readonly #listAll: StatementSync;
  readonly #nextDisplaySeq: StatementSync;
  readonly #insertDisplay: StatementSync;
  readonly #display: StatementSync;
  readonly #nextContextSeq: StatementSync;
  readonly #insertContext: StatementSync;
  readonly #context: StatementSync;
  readonly #ephemeral: StatementSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#insert = db.prepare(`INSERT INTO sessions (id, owner, profile, parent_id, depth, ephemeral, tool_limit, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.#get = db.prepare('SELECT * FROM sessions WHERE id = ?');
    this.#delete = db.prepare('DELETE FROM sessions WHERE id = ?');
    this.#touch = db.prepare('UPDATE sessions SET updated_at = ? WHERE id = ?');
    this.#setProfile = db.prepare('UPDATE sessions SET profile = ?, updated_at = ? WHERE id = ?');
    this.#listByOwner = db.prepare('SELECT * FROM sessions WHERE owner = ? AND ephemeral = 0 ORDER BY updated_at DESC, id LIMIT ?');
    this.#listAll = db.prepare('SELECT * FROM sessions WHERE ephemeral = 0 ORDER BY updated_at DESC, id LIMIT ?');
    this.#nextDisplaySeq = db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM display_entries WHERE session_id = ?');
    this.#insertDisplay = db.prepare('INSERT INTO display_entries (session_id, seq, entry, created_at) VALUES (?, ?, ?, ?)');
    this.#display = db.prepare('SELECT seq, entry, created_at FROM display_entries WHERE session_id = ? AND seq > ? ORDER BY seq');
    this.#nextContextSeq = db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM context_messages WHERE session_id = ?');
    this.#insertContext = db.prepare('INSERT INTO context_messages (session_id, seq, message) VALUES (?, ?, ?)');
    this.#context = db.prepare('SELECT message FROM context_messages WHERE session_id = ? ORDER BY seq');
    this.#ephemeral = db.prepare('SELECT id FROM sessions WHERE ephemeral = 1');
  }

  create(init: NewSession): SessionRecord {
    const now = timestamp();
    const id = `ses_${randomUUID().replaceAll('-', '')}`;
    this.#insert.run(
      id, init.owner, init.profile, init.parentId ?? null, init.depth ?? 0, init.ephemeral === true ? 1 : 0,
      init.toolLimit === undefined ? null : JSON.stringify(init.toolLimit), now, now,
    );
    const created = this.get(id);
    if (created === undefined) throw new Error(`session ${id} vanished right after it was created`);
    return created;
  }

  get(id: string): SessionRecord | undefined {
    const row = this.#get.get(id);
    return row === undefined ? undefined : toSession(row);
  }

  /** Removes the session with its buffers, state and sub-agent sessions; false when it did not exist. */
  delete(id: string): boolean {
    return Number(this.#delete.run(id).changes) > 0;
  }

  setProfile(id: string, profile: string): void {
    this.#setProfile.run(profile, timestamp(), id);
  }

  /** The newest first; `owner` undefined lists everyone's (admins). Ephemeral sessions are not listed. */
  list(owner: string | undefined, limit = 100): SessionRecord[] {
    const rows = owner === undefined ? this.#listAll.all(limit) : this.#listByOwner.all(owner, limit);
    return rows.map(toSession);
  }

  /** Appends to both buffers at once: either all of it is kept or none. */
  append(id: string, additions: { display?: readonly DisplayEntry[]; context?: readonly ContextMessage[] }): void {
    const now = timestamp();
    transaction(this.#db, () => {
      if (additions.display !== undefined && additions.display.length > 0) {
        let seq = integer(this.#nextDisplaySeq.get(id) ?? {}, 'next');
        for (const entry of additions.display) this.#insertDisplay.run(id, seq++, JSON.stringify(entry), now);
      }
      if (additions.context !== undefined && additions.context.length > 0) {
        let seq = integer(this.#nextContextSeq.get(id) ?? {}, 'next');
        for (const message of additions.context) this.#insertContext.run(id, seq++, JSON.stringify(message));
      }
      this.#touch.run(now, id);
    });
  }

  display(id: string, afterSeq = 0): StoredDisplayEntry[] {
    return this.#display.all(id, afterSeq).map((row) => ({
      seq: integer(row, 'seq'), at: text(row, 'created_at'), entry: JSON.parse(text(row, 'entry')) as DisplayEntry,
    }));
  }

  context(id: string): ContextMessage[] {
    return this.#context.all(id).map((row) => JSON.parse(text(row, 'message')) as ContextMessage);
  }

  /** Sub-agent sessions a crash left behind (their runs cannot resume); removed at start. */
  removeEphemeral(): number {
    const ids = this.#ephemeral.all().map((row) => text(row, 'id'));
    for (const id of ids) this.delete(id);
    return ids.length;
  }
}

function toSession(row: Row): SessionRecord {
  const toolLimit = optionalText(row, 'tool_limit');
  return {
    id: text(row, 'id'),
    owner: text(row, 'owner'),
    profile: text(row, 'profile'),
    parentId: optionalText(row, 'parent_id'),
    depth: integer(row, 'depth'),
    ephemeral: integer(row, 'ephemeral') === 1,
    toolLimit: toolLimit === null ? null : JSON.parse(toolLimit) as string[],
    createdAt: text(row, 'created_at'),
    updatedAt: text(row, 'updated_at'),
  };
}
