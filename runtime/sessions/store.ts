import path from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { DATABASE_FILE, openDatabase } from './database.ts';
import { MemoryStore } from './memory-store.ts';
import { SessionStore } from './session-store.ts';
import { StateStore } from './state-store.ts';

/** The embedded store in the data folder: sessions with their buffers, per-session state, memory. */
export interface Store {
  readonly file: string;
  readonly db: DatabaseSync;
  readonly sessions: SessionStore;
  readonly state: StateStore;
  readonly memory: MemoryStore;
  close(): void;
}

export function openStore(dataDir: string): Store {
  const file = path.join(dataDir, DATABASE_FILE);
  const db = openDatabase(file);
  const sessions = new SessionStore(db);
  sessions.removeEphemeral();
  return {
    file, db, sessions, state: new StateStore(db), memory: new MemoryStore(db),
    close() {
      if (db.isOpen) db.close();
    },
  };
}
