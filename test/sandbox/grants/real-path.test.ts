/**
 * Pins: the real-path walk used by every path check and by grant parsing. It follows symlinks the
 * way the kernel does (relative targets from the link's folder, absolute ones from the root,
 * chains, `..` from the real folder), appends what does not exist yet, stops with an errno for what
 * it cannot walk, and gives the same answer synchronously and asynchronously.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveRealPath, resolveRealPathSync } from '../../../sandbox/grants/real-path.ts';
import { makeWorkspace } from './fixtures.ts';
import type { Workspace } from './fixtures.ts';

let workspace: Workspace;
let root: string;

beforeAll(async () => {
  workspace = await makeWorkspace();
  root = workspace.root;
  await mkdir(path.join(root, 'a', 'b', 'c'), { recursive: true });
  await writeFile(path.join(root, 'a', 'b', 'c', 'file.txt'), 'x');
  await symlink('b/c', path.join(root, 'a', 'to-c'));
  await symlink(path.join(root, 'a', 'to-c'), path.join(root, 'chain'));
  await symlink('../../a', path.join(root, 'a', 'b', 'up'));
  await symlink(path.join(root, 'nowhere', 'deep'), path.join(root, 'dangling'));
  await symlink('self', path.join(root, 'self'));
});
afterAll(() => workspace.cleanup());

describe('resolveRealPath', () => {
  const cases: [string, string | undefined, string][] = [
    ['a/to-c/file.txt', undefined, 'a/b/c/file.txt'],
    ['chain/file.txt', undefined, 'a/b/c/file.txt'],
    ['chain/../c/file.txt', undefined, 'a/b/c/file.txt'],
    ['a/b/up/to-c', undefined, 'a/b/c'],
    ['a/to-c/new/deeper.txt', undefined, 'a/b/c/new/deeper.txt'],
    ['dangling/x', undefined, 'nowhere/deep/x'],
    ['a/b/c/file.txt/x', 'ENOTDIR', 'a/b/c/file.txt/x'],
    ['self', 'ELOOP', 'self'],
    ['missing/../a', 'ENOENT', 'a'],
    ['.', undefined, ''],
  ];

  it.each(cases)('%s -> %s %s (async and sync agree)', async (asked, error, expected) => {
    const want = { path: path.join(root, expected), error };
    expect(await resolveRealPath(root, asked)).toEqual(want);
    expect(resolveRealPathSync(root, asked)).toEqual(want);
  });

  it('does not follow the last symlink when asked not to', async () => {
    expect(await resolveRealPath(root, 'chain', { followFinal: false })).toEqual({ path: path.join(root, 'chain'), error: undefined });
    expect(await resolveRealPath(root, 'chain/', { followFinal: false })).toEqual({ path: path.join(root, 'a', 'b', 'c'), error: undefined });
  });

  it('resolves a working directory that is itself a symlink', async () => {
    expect(await resolveRealPath(path.join(root, 'chain'), 'file.txt')).toEqual({ path: path.join(root, 'a', 'b', 'c', 'file.txt'), error: undefined });
  });

  it('refuses a relative working directory (a programming error, not a guest error)', () => {
    expect(() => resolveRealPathSync('relative/cwd', 'x')).toThrow(TypeError);
  });
});
