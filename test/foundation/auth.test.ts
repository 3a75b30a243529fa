/**
 * Pins: a bearer key is recognised only in its exact form (scheme case aside) and maps to its
 * caller; `admin` implies `invoke`; with no key configured, the generated key file is created once
 * with mode 0600, reused afterwards, and refused when others may read it or cannot be created.
 */
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  GENERATED_KEY_FILE, KeyFileError, KeyStore, hashKey, hasScope, loadOrCreateGeneratedKey,
} from '../../runtime/auth/keys.ts';
import { tempDir } from '../helpers/temp.ts';

const ADMIN = 'admin-key-0123456789abcdef';
const CLIENT = 'client-key-0123456789abcdef';
const store = new KeyStore([
  { name: 'operator', sha256: hashKey(ADMIN), scopes: ['admin'] },
  { name: 'ci', sha256: hashKey(CLIENT), scopes: ['invoke'] },
]);

describe('KeyStore.verify', () => {
  it('maps each right key to its caller', () => {
    expect(store.size).toBe(2);
    expect(store.verify(`Bearer ${ADMIN}`)).toEqual({ name: 'operator', scopes: ['admin'], policy: 'default' });
    expect(store.verify(`Bearer ${CLIENT}`)).toEqual({ name: 'ci', scopes: ['invoke'], policy: 'default' });
  });

  it('accepts the scheme in any case', () => {
    expect(store.verify(`bearer ${CLIENT}`)?.name).toBe('ci');
    expect(store.verify(`BEARER ${CLIENT}`)?.name).toBe('ci');
  });

  it('refuses a wrong or near-miss key', () => {
    expect(store.verify('Bearer wrong-key-0123456789abcdef')).toBeUndefined();
    expect(store.verify(`Bearer ${CLIENT.slice(0, -1)}`)).toBeUndefined();
    expect(store.verify(`Bearer ${CLIENT}x`)).toBeUndefined();
    expect(store.verify(`Bearer ${CLIENT.toUpperCase()}`)).toBeUndefined();
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['another scheme', `Basic ${CLIENT}`],
    ['the key alone', CLIENT],
    ['the scheme alone', 'Bearer'],
    ['two tokens', `Bearer ${CLIENT} ${CLIENT}`],
    ['a non-ASCII key', 'Bearer clé-0123456789abcdef'],
    ['an oversized key', `Bearer ${'k'.repeat(513)}`],
  ])('refuses %s', (_label, header) => {
    expect(store.verify(header)).toBeUndefined();
  });

  it('keeps only digests: the callers it hands out are frozen and hold no key', () => {
    const caller = store.verify(`Bearer ${ADMIN}`);
    expect(Object.isFrozen(caller)).toBe(true);
    expect(JSON.stringify(caller)).not.toContain(ADMIN);
  });
});

describe('hasScope', () => {
  it('lets admin do what invoke does, and not the other way round', () => {
    const admin = { name: 'operator', scopes: ['admin'] as const, policy: 'default' };
    const invoke = { name: 'ci', scopes: ['invoke'] as const, policy: 'default' };
    expect(hasScope(admin, 'admin')).toBe(true);
    expect(hasScope(admin, 'invoke')).toBe(true);
    expect(hasScope(invoke, 'invoke')).toBe(true);
    expect(hasScope(invoke, 'admin')).toBe(false);
  });
});

describe('the generated key file', () => {
  it('is created on first start with mode 0600 in a 0700 data folder, holding a key whose hash it returns', async () => {
    const dataDir = path.join(await tempDir(), 'data');
    const generated = await loadOrCreateGeneratedKey(dataDir);
    const file = path.join(dataDir, GENERATED_KEY_FILE);
    expect(generated.file).toBe(file);
    expect(generated.created).toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    const content = await readFile(file, 'utf8');
    expect(content).toMatch(/^pdk_[A-Za-z0-9_-]{43}\n$/);
    expect(generated.key).toEqual({ name: 'local-admin', sha256: hashKey(content.trim()), policy: 'default', scopes: ['admin'] });
    expect(new KeyStore([generated.key]).verify(`Bearer ${content.trim()}`)).toEqual({ name: 'local-admin', scopes: ['admin'], policy: 'default' });
  });

  it('is reused on the next start, unchanged', async () => {
    const dataDir = await tempDir();
    const first = await loadOrCreateGeneratedKey(dataDir);
    const content = await readFile(first.file, 'utf8');
    const second = await loadOrCreateGeneratedKey(dataDir);
    expect(second).toEqual({ ...first, created: false });
    expect(await readFile(first.file, 'utf8')).toBe(content);
    expect((await stat(first.file)).mode & 0o777).toBe(0o600);
  });

  it.each([0o644, 0o640, 0o604])('is refused when its mode is %o (readable by others)', async (mode) => {
    const dataDir = await tempDir();
    const { file } = await loadOrCreateGeneratedKey(dataDir);
    await chmod(file, mode);
    await expect(loadOrCreateGeneratedKey(dataDir)).rejects.toEqual(new KeyFileError(
      `the key file ${file} is accessible to other users (mode ${mode.toString(8)}); run: chmod 600 ${file}`,
    ));
  });

  it('is refused when it does not hold a key', async () => {
    const dataDir = await tempDir();
    const file = path.join(dataDir, GENERATED_KEY_FILE);
    await writeFile(file, 'short\n', { mode: 0o600 });
    await expect(loadOrCreateGeneratedKey(dataDir)).rejects.toEqual(new KeyFileError(
      `the key file ${file} does not hold a key; delete it to have a new one created`,
    ));
  });

  it('cannot be created when the data folder cannot be (a path under a regular file)', async () => {
    const blocker = path.join(await tempDir(), 'a-file');
    await writeFile(blocker, '');
    const dataDir = path.join(blocker, 'data');
    await expect(loadOrCreateGeneratedKey(dataDir)).rejects.toEqual(new KeyFileError(
      `cannot create the data folder ${dataDir}: ENOTDIR`,
    ));
  });
});
