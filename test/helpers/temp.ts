import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/** A fresh folder under the system temp dir, removed when the current test finishes. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'paddock-test-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
