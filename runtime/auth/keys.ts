import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ApiKeyConfig, Scope } from '../config/schema.ts';

/** Who is calling, as proven by a bearer key. */
export interface Caller {
  readonly name: string;
  readonly scopes: readonly Scope[];
  /** The grant policy (config "policies") bounding this caller's tool calls. */
  readonly policy: string;
}

/** `admin` implies `invoke`: an operator key can do everything a client key can. */
export function hasScope(caller: Caller, scope: Scope): boolean {
  return caller.scopes.includes(scope) || caller.scopes.includes('admin');
}

/** Holds only SHA-256 digests of keys and compares them in constant time. */
export class KeyStore {
  readonly #entries: readonly { caller: Caller; digest: Buffer }[];

  constructor(keys: readonly ApiKeyConfig[]) {
    this.#entries = keys.map((key) => ({
      caller: Object.freeze({ name: key.name, scopes: Object.freeze([...key.scopes]), policy: key.policy ?? 'default' }),
      digest: Buffer.from(key.sha256, 'hex'),
    }));
  }

  get size(): number {
    return this.#entries.length;
  }

  /** The caller for an `Authorization: Bearer <key>` header, or undefined for a missing or unknown key. */
  verify(authorization: string | undefined): Caller | undefined {
    const match = /^Bearer +([\x21-\x7e]{1,512})$/i.exec(authorization?.trim() ?? '');
    if (match?.[1] === undefined) return undefined;
    const digest = createHash('sha256').update(match[1], 'utf8').digest();
    let found: Caller | undefined;
    // Every entry is compared, matched or not, so timing says nothing about which key was close.
    for (const entry of this.#entries) {
      if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry.caller;
    }
    return found;
  }
}

export class KeyFileError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

export const GENERATED_KEY_FILE = 'api-key';
export const GENERATED_KEY_NAME = 'local-admin';

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function newKey(): string {
  return `pdk_${randomBytes(32).toString('base64url')}`;
}

/**
 * With no key configured, the service uses one stored in the data folder: created on first start
 * (mode 0600, never logged), read on later starts. A key file others can read is refused.
 */
export async function loadOrCreateGeneratedKey(dataDir: string): Promise<{ file: string; created: boolean; key: ApiKeyConfig }> {
  const file = path.join(dataDir, GENERATED_KEY_FILE);
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new KeyFileError(`cannot create the data folder ${dataDir}: ${errorCode(error)}`, { cause: error });
  }
  let created = false;
  let secret: string;
  try {
    const handle = await open(file, 'wx', 0o600);
    secret = newKey();
    try {
      await handle.writeFile(`${secret}\n`, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    created = true;
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw new KeyFileError(`cannot write the key file ${file}: ${errorCode(error)}`, { cause: error });
    const info = await stat(file);
    if ((info.mode & 0o077) !== 0) {
      throw new KeyFileError(`the key file ${file} is accessible to other users (mode ${(info.mode & 0o777).toString(8)}); run: chmod 600 ${file}`);
    }
    secret = (await readFile(file, 'utf8')).trim();
    if (secret.length < 16) throw new KeyFileError(`the key file ${file} does not hold a key; delete it to have a new one created`);
  }
  return { file, created, key: { name: GENERATED_KEY_NAME, sha256: hashKey(secret), policy: 'default', scopes: ['admin'] } };
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}
