/**
 * The schema, as ordered migrations. Never edit a shipped migration: add the next one. Version N is
 * the `PRAGMA user_version` a database has once migration N ran (test/sessions/database.test.ts
 * checks the order and that each step applies to a database left at the one before).
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions and their two buffers',
    sql: `
      CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        owner       TEXT NOT NULL,
        profile     TEXT NOT NULL,
        parent_id   TEXT REFERENCES sessions(id) ON DELETE CASCADE,
        depth       INTEGER NOT NULL DEFAULT 0,
        ephemeral   INTEGER NOT NULL DEFAULT 0,
        tool_limit  TEXT,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      ) STRICT;
      CREATE INDEX sessions_by_owner ON sessions(owner, updated_at);
      CREATE INDEX sessions_by_parent ON sessions(parent_id);

      -- What a person reads: messages, tool calls and results, errors.
      CREATE TABLE display_entries (
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq         INTEGER NOT NULL,
        entry       TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) STRICT, WITHOUT ROWID;

      -- What the model reads next time: chat-completion messages, images from tools included.
      CREATE TABLE context_messages (
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq         INTEGER NOT NULL,
        message     TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    name: 'todo list and scratchpad per session',
    sql: `
      CREATE TABLE todos (
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        id          INTEGER NOT NULL,
        content     TEXT NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'done', 'failed', 'skipped')),
        note        TEXT,
        updated_at  TEXT NOT NULL,
        PRIMARY KEY (session_id, id)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE scratchpad_sections (
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        name        TEXT NOT NULL,
        content     TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        PRIMARY KEY (session_id, name)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    name: 'memory per profile with full-text search',
    sql: `
      CREATE TABLE memories (
        id          INTEGER PRIMARY KEY,
        scope       TEXT NOT NULL,
        content     TEXT NOT NULL,
        tags        TEXT NOT NULL DEFAULT '',
        created_at  TEXT NOT NULL
      ) STRICT;
      CREATE INDEX memories_by_scope ON memories(scope);

      CREATE VIRTUAL TABLE memories_fts USING fts5(content, tags, content='memories', content_rowid='id', tokenize='porter unicode61');
      CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, content, tags) VALUES (new.id, new.content, new.tags);
      END;
      CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content, tags) VALUES ('delete', old.id, old.content, old.tags);
      END;
      CREATE TRIGGER memories_au AFTER UPDATE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content, tags) VALUES ('delete', old.id, old.content, old.tags);
        INSERT INTO memories_fts(rowid, content, tags) VALUES (new.id, new.content, new.tags);
      END;
    `,
  },
];
