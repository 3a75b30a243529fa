/**
 * Pins: the schema comes from ordered migrations (1, 2, 3 ... without gaps); each one applies to a
 * database left at the version before it, in its own transaction, so a failing one leaves the
 * database at the last good version; a database newer than the build is refused, not touched.
 */
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { DatabaseError, migrate, openDatabase, schemaVersion } from '../../runtime/sessions/database.ts';
import { MIGRATIONS } from '../../runtime/sessions/migrations.ts';
import { tempDir } from '../helpers/temp.ts';

const tablesOf = (db: DatabaseSync): string[] =>
  db.prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'trigger') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memories_fts_%' ORDER BY name")
    .all().map((row) => String(row['name']));

describe('migrations', () => {
  it('are numbered 1, 2, 3 ... in order', () => {
    expect(MIGRATIONS.map((migration) => migration.version)).toEqual(MIGRATIONS.map((_migration, index) => index + 1));
  });

  it('bring a new database to the latest version, step by step from every earlier one', () => {
    for (let start = 0; start <= MIGRATIONS.length; start++) {
      const db = new DatabaseSync(':memory:', { enableForeignKeyConstraints: true });
      migrate(db, MIGRATIONS.slice(0, start));
      expect(schemaVersion(db)).toBe(start);
      migrate(db, MIGRATIONS);
      expect(schemaVersion(db)).toBe(MIGRATIONS.length);
      expect(tablesOf(db)).toEqual([
        'context_messages', 'display_entries', 'memories', 'memories_ad', 'memories_ai', 'memories_au', 'memories_fts',
        'scratchpad_sections', 'sessions', 'todos',
      ]);
      db.close();
    }
  });

  it('do nothing on a database that is up to date', async () => {
    const file = path.join(await tempDir(), 'nested', 'paddock.db');
    openDatabase(file).close();
    const db = openDatabase(file);
    expect(schemaVersion(db)).toBe(MIGRATIONS.length);
    db.close();
  });

  it('leave the database at the last good version when one fails, and say which', () => {
    const db = new DatabaseSync(':memory:');
    const broken = [...MIGRATIONS, { version: MIGRATIONS.length + 1, name: 'broken', sql: 'CREATE TABLE extra (x); SELECT * FROM nowhere;' }];
    expect(() => { migrate(db, broken); }).toThrow(new DatabaseError(`migration ${broken.length} (broken) failed: no such table: nowhere`));
    expect(schemaVersion(db)).toBe(MIGRATIONS.length);
    expect(tablesOf(db)).not.toContain('extra');
  });

  it('refuse a database newer than the build', () => {
    const db = new DatabaseSync(':memory:');
    db.exec(`PRAGMA user_version = ${MIGRATIONS.length + 5}`);
    expect(() => { migrate(db, MIGRATIONS); }).toThrow(/schema version \d+, newer than this build knows/);
    expect(schemaVersion(db)).toBe(MIGRATIONS.length + 5);
  });

  it('refuse a list out of order', () => {
    const db = new DatabaseSync(':memory:');
    const [first, second] = MIGRATIONS;
    expect(() => { migrate(db, [second!, first!]); }).toThrow(/has version 2, expected 1/);
    expect(schemaVersion(db)).toBe(0);
  });
});
