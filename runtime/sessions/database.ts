import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { SQLInputValue, SQLOutputValue } from 'node:sqlite';
import { MIGRATIONS } from './migrations.ts';
import type { Migration } from './migrations.ts';

export type Row = Record<string, SQLOutputValue>;
export type Params = readonly SQLInputValue[];

/** The embedded store cannot be used as it is (a newer schema, a broken migration). */
export class DatabaseError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

export const DATABASE_FILE = 'paddock.db';

/**
 * Opens (creating it if needed) the SQLite database in the data folder and brings its schema up to
 * date: each migration whose version is above `PRAGMA user_version` runs in its own transaction, in
 * order, so a failed one leaves the database at the last good version.
 */
export function openDatabase(file: string, migrations: readonly Migration[] = MIGRATIONS): DatabaseSync {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const db = new DatabaseSync(file, { enableForeignKeyConstraints: true, timeout: 5_000 });
  try {
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
    migrate(db, migrations);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** The schema version a database is at (0 for a new one). */
export function schemaVersion(db: DatabaseSync): number {
  const row = db.prepare('PRAGMA user_version').get();
  return Number(row?.['user_version'] ?? 0);
}

export function migrate(db: DatabaseSync, migrations: readonly Migration[]): void {
  checkOrder(migrations);
  const current = schemaVersion(db);
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new DatabaseError(`the database is at schema version ${current}, newer than this build knows (${latest}); run a newer Paddock or restore a backup`);
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    try {
      transaction(db, () => {
        db.exec(migration.sql);
        db.exec(`PRAGMA user_version = ${migration.version}`);
      });
    } catch (error) {
      throw new DatabaseError(`migration ${migration.version} (${migration.name}) failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

/** Migrations are numbered 1, 2, 3 ... without gaps: the number is the schema version they produce. */
function checkOrder(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new DatabaseError(`migration "${migration.name}" has version ${migration.version}, expected ${index + 1}: versions must run 1, 2, 3 ... in order`);
    }
  });
}

/** Runs `body` in one IMMEDIATE transaction (committed when it returns, rolled back when it throws). */
export function transaction<Result>(db: DatabaseSync, body: () => Result): Result {
  if (db.isTransaction) return body();
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = body();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

export function text(row: Row, column: string): string {
  const value = row[column];
  if (typeof value !== 'string') throw new DatabaseError(`column ${column}: expected text, found ${value === null ? 'null' : typeof value}`);
  return value;
}

export function optionalText(row: Row, column: string): string | null {
  const value = row[column];
  return value === null || value === undefined ? null : text(row, column);
}

export function integer(row: Row, column: string): number {
  const value = row[column];
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  throw new DatabaseError(`column ${column}: expected an integer, found ${value === null ? 'null' : typeof value}`);
}

let lastStamp = 0;

/** An ISO timestamp, strictly after every earlier one from this process (so "newest first" is an order). */
export function timestamp(): string {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return new Date(lastStamp).toISOString();
}
