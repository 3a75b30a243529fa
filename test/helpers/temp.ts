import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/** Registers clean-up for the current test; concurrent tests pass their context's own `onTestFinished`. */
export type OnFinished = (cleanup: () => void | Promise<void>) => void;

/** A fresh folder under the system temp dir, removed when the current test finishes. */
export async function tempDir(onFinished: OnFinished = onTestFinished): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'paddock-test-'));
  onFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
