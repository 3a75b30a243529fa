/**
 * Pins: the fs capability confines every operation to the call's grant by real path, audits each
 * use and each denial (target as the guest wrote it), caps reads and writes, answers with Deno's
 * error classes and messages (never naming a host path the guest did not write), and refuses
 * everything once revoked.
 */
import { lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallError, GuestError } from '../../../sandbox/errors.ts';
import { bindFs } from '../../../sandbox/capabilities/fs.ts';
import type { BoundFs, FsCapabilityDeps } from '../../../sandbox/capabilities/fs.ts';
import { nodeFileSystem } from '../../../sandbox/capabilities/file-system.ts';
import type { FileSystem } from '../../../sandbox/capabilities/file-system.ts';
import { normalizeGrant } from '../../../sandbox/grants/grant.ts';
import type { Grant } from '../../../sandbox/grants/grant.ts';
import { IDENTITY, makeWorkspace, recordingSink } from '../grants/fixtures.ts';
import type { RecordingSink, Workspace } from '../grants/fixtures.ts';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const bytes = (value: string) => new TextEncoder().encode(value);
const writeArgs = (target: string, data: Uint8Array, options: Partial<{ append: boolean; create: boolean; createNew: boolean; mode: number | null }> = {}) =>
  ({ path: target, data, append: false, create: true, createNew: false, mode: null, ...options });
const denied = (name: 'read' | 'write', target: string) =>
  new GuestError('NotCapable', `Requires ${name} access to "${target}", run again with the --allow-${name} flag`);

let workspace: Workspace;
let granted: string;
let outside: string;
let audit: RecordingSink;

function bind(grant: Grant, overrides: Partial<FsCapabilityDeps> = {}): BoundFs {
  return bindFs(grant, IDENTITY, { cwd: granted, audit, maxReadBytes: 1024, maxWriteBytes: 1024, ...overrides });
}

function grantFolder(access: { read?: boolean; write?: boolean } = { read: true, write: true }): Grant {
  return normalizeGrant({ read: access.read === true ? [granted] : [], write: access.write === true ? [granted] : [] }, { cwd: '/' });
}

beforeEach(async () => {
  workspace = await makeWorkspace();
  audit = recordingSink();
  granted = path.join(workspace.root, 'granted');
  outside = path.join(workspace.root, 'outside');
  await mkdir(path.join(granted, 'sub'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(granted, 'notes.txt'), 'hello');
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  await symlink('../outside', path.join(granted, 'escape'));
  await symlink(path.join(outside, 'planted.txt'), path.join(granted, 'dangling'));
  await symlink('loop', path.join(granted, 'loop'));
});
afterEach(() => workspace.cleanup());

describe('readFile', () => {
  it('reads a file inside the granted folder and audits the use', async () => {
    const { handlers } = bind(grantFolder());
    expect(text(await handlers.readFile({ path: 'notes.txt' }))).toBe('hello');
    expect(audit.records).toEqual([{ ...IDENTITY, capability: 'read', target: 'notes.txt', allowed: true, reason: undefined }]);
  });

  it('denies a file outside the grant with Deno\'s message and audits the denial', async () => {
    const { handlers } = bind(grantFolder());
    await expect(handlers.readFile({ path: '../outside/secret.txt' })).rejects.toEqual(denied('read', '../outside/secret.txt'));
    expect(audit.records).toEqual([{ ...IDENTITY, capability: 'read', target: '../outside/secret.txt', allowed: false, reason: 'not granted' }]);
  });

  it('denies a symlink that points outside the granted folder', async () => {
    const { handlers } = bind(grantFolder());
    await expect(handlers.readFile({ path: 'escape/secret.txt' })).rejects.toEqual(denied('read', 'escape/secret.txt'));
    expect(audit.records.at(-1)).toMatchObject({ capability: 'read', target: 'escape/secret.txt', allowed: false });
  });

  it('denies an absolute path outside, naming it normalised', async () => {
    const { handlers } = bind(grantFolder());
    const asked = `${granted}/../outside/./secret.txt`;
    await expect(handlers.readFile({ path: asked })).rejects.toEqual(denied('read', path.join(outside, 'secret.txt')));
    expect(audit.records.at(-1)).toMatchObject({ target: asked, allowed: false });
  });

  it('needs a read grant, not a write grant', async () => {
    const { handlers } = bind(grantFolder({ write: true }));
    await expect(handlers.readFile({ path: 'notes.txt' })).rejects.toEqual(denied('read', 'notes.txt'));
  });

  it('caps the size read: over the limit is a RangeError, at the limit is fine', async () => {
    await writeFile(path.join(granted, 'big.bin'), new Uint8Array(1025));
    await writeFile(path.join(granted, 'fits.bin'), new Uint8Array(1024));
    const { handlers } = bind(grantFolder());
    await expect(handlers.readFile({ path: 'big.bin' }))
      .rejects.toEqual(new GuestError('RangeError', '"big.bin" is 1025 bytes, over the read limit of 1024 bytes per file operation'));
    expect((await handlers.readFile({ path: 'fits.bin' })).byteLength).toBe(1024);
  });

  it('caps a file that does not say its size (a device that never ends)', async () => {
    const { handlers } = bindFs(normalizeGrant({ read: ['/dev/zero'] }, { cwd: '/' }), IDENTITY, {
      cwd: granted, audit, maxReadBytes: 100_000, maxWriteBytes: 0,
    });
    await expect(handlers.readFile({ path: '/dev/zero' }))
      .rejects.toEqual(new GuestError('RangeError', '"/dev/zero" is larger than the read limit of 100000 bytes per file operation'));
  });

  it('maps errors to Deno\'s classes and messages, naming only the path as written', async () => {
    const { handlers } = bind(grantFolder());
    const cases: [string, GuestError][] = [
      ['missing.txt', new GuestError('NotFound', "No such file or directory (os error 2): readfile 'missing.txt'")],
      ['nope/x.txt', new GuestError('NotFound', "No such file or directory (os error 2): readfile 'nope/x.txt'")],
      ['sub', new GuestError('IsADirectory', "Is a directory (os error 21): readfile 'sub'")],
      // Deno names no path for errors met while resolving a readfile path.
      ['notes.txt/x', new GuestError('NotADirectory', 'Not a directory (os error 20)')],
      ['loop', new GuestError('FilesystemLoop', 'Too many levels of symbolic links (os error 40)')],
      ['a\0b', new GuestError('TypeError', "file name contained an unexpected NUL byte: readfile 'a\0b'")],
      ['', new GuestError('Error', 'Empty path is not allowed')],
    ];
    for (const [asked, expected] of cases) {
      const error = await handlers.readFile({ path: asked }).then(() => undefined, (thrown: unknown) => thrown);
      expect(error, asked).toEqual(expected);
      expect((error as Error).message).not.toContain(workspace.root);
    }
  });
});

describe('writeFile', () => {
  it('creates a file that does not exist yet under the granted folder', async () => {
    const { handlers } = bind(grantFolder());
    expect(await handlers.writeFile(writeArgs('sub/new.txt', bytes('data')))).toBeNull();
    expect(await readFile(path.join(granted, 'sub', 'new.txt'), 'utf8')).toBe('data');
    expect(audit.records).toEqual([{ ...IDENTITY, capability: 'write', target: 'sub/new.txt', allowed: true, reason: undefined }]);
  });

  it('denies a write outside the grant and audits it', async () => {
    const { handlers } = bind(grantFolder());
    await expect(handlers.writeFile(writeArgs('../outside/new.txt', bytes('x')))).rejects.toEqual(denied('write', '../outside/new.txt'));
    expect(audit.records.at(-1)).toMatchObject({ capability: 'write', target: '../outside/new.txt', allowed: false, reason: 'not granted' });
  });

  it('denies writing through a dangling symlink to outside, and creates nothing there', async () => {
    const { handlers } = bind(grantFolder());
    await expect(handlers.writeFile(writeArgs('dangling', bytes('x')))).rejects.toEqual(denied('write', 'dangling'));
    await expect(lstat(path.join(outside, 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('needs a write grant, not a read grant', async () => {
    const { handlers } = bind(grantFolder({ read: true }));
    await expect(handlers.writeFile(writeArgs('notes.txt', bytes('x')))).rejects.toEqual(denied('write', 'notes.txt'));
    expect(await readFile(path.join(granted, 'notes.txt'), 'utf8')).toBe('hello');
  });

  it('appends, refuses createNew on an existing file, and create: false on a missing one', async () => {
    const { handlers } = bind(grantFolder());
    await handlers.writeFile(writeArgs('notes.txt', bytes(' world'), { append: true }));
    expect(await readFile(path.join(granted, 'notes.txt'), 'utf8')).toBe('hello world');
    await expect(handlers.writeFile(writeArgs('notes.txt', bytes('x'), { createNew: true })))
      .rejects.toEqual(new GuestError('AlreadyExists', "File exists (os error 17): writefile 'notes.txt'"));
    await expect(handlers.writeFile(writeArgs('nc.txt', bytes('x'), { create: false })))
      .rejects.toEqual(new GuestError('NotFound', "No such file or directory (os error 2): writefile 'nc.txt'"));
    await expect(handlers.writeFile(writeArgs('np/x.txt', bytes('x'))))
      .rejects.toEqual(new GuestError('NotFound', "No such file or directory (os error 2): writefile 'np/x.txt'"));
    await expect(handlers.writeFile(writeArgs('sub', bytes('x'))))
      .rejects.toEqual(new GuestError('IsADirectory', "Is a directory (os error 21): writefile 'sub'"));
    await expect(handlers.writeFile(writeArgs('notes.txt/x', bytes('x'))))
      .rejects.toEqual(new GuestError('NotADirectory', 'Not a directory (os error 20)'));
  });

  it('applies the mode to a file it creates', async () => {
    const { handlers } = bind(grantFolder());
    await handlers.writeFile(writeArgs('private.txt', bytes('x'), { mode: 0o600 }));
    expect((await lstat(path.join(granted, 'private.txt'))).mode & 0o777).toBe(0o600);
  });

  it('caps the bytes written and writes nothing over the cap', async () => {
    const { handlers } = bind(grantFolder());
    await expect(handlers.writeFile(writeArgs('big.bin', new Uint8Array(1025))))
      .rejects.toEqual(new GuestError('RangeError', 'Writing 1025 bytes to "big.bin" is over the write limit of 1024 bytes per file operation'));
    await expect(lstat(path.join(granted, 'big.bin'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('readDir and stat', () => {
  it('lists a granted folder with entry types', async () => {
    const { handlers } = bind(grantFolder());
    const entries = await handlers.readDir({ path: '.' });
    expect(entries.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'dangling', isFile: false, isDirectory: false, isSymlink: true },
      { name: 'escape', isFile: false, isDirectory: false, isSymlink: true },
      { name: 'loop', isFile: false, isDirectory: false, isSymlink: true },
      { name: 'notes.txt', isFile: true, isDirectory: false, isSymlink: false },
      { name: 'sub', isFile: false, isDirectory: true, isSymlink: false },
    ]);
    expect(audit.records).toEqual([{ ...IDENTITY, capability: 'read', target: '.', allowed: true, reason: undefined }]);
  });

  it('denies listing a folder outside, also through a symlink', async () => {
    const { handlers } = bind(grantFolder());
    await expect(handlers.readDir({ path: '..' })).rejects.toEqual(denied('read', '..'));
    await expect(handlers.readDir({ path: 'escape' })).rejects.toEqual(denied('read', 'escape'));
    expect(audit.records.map((record) => record.allowed)).toEqual([false, false]);
  });

  it('stats a file, and lstat describes a link itself even when its target is outside', async () => {
    const { handlers } = bind(grantFolder());
    const info = await handlers.stat({ path: 'notes.txt', lstat: false });
    expect(info).toMatchObject({ isFile: true, isDirectory: false, isSymlink: false, size: 5 });
    expect(info.mode).toBe((await lstat(path.join(granted, 'notes.txt'))).mode);
    expect(await handlers.stat({ path: 'escape', lstat: true })).toMatchObject({ isSymlink: true, isFile: false });
    await expect(handlers.stat({ path: 'escape', lstat: false })).rejects.toEqual(denied('read', 'escape'));
  });

  it('maps stat errors with the op name Deno uses', async () => {
    const { handlers } = bind(grantFolder());
    await expect(handlers.stat({ path: 'missing', lstat: false }))
      .rejects.toEqual(new GuestError('NotFound', "No such file or directory (os error 2): stat 'missing'"));
    await expect(handlers.stat({ path: 'missing', lstat: true }))
      .rejects.toEqual(new GuestError('NotFound', "No such file or directory (os error 2): lstat 'missing'"));
    await expect(handlers.stat({ path: 'notes.txt/x', lstat: false }))
      .rejects.toEqual(new GuestError('NotADirectory', "Not a directory (os error 20): stat 'notes.txt/x'"));
    await expect(handlers.stat({ path: 'loop', lstat: false }))
      .rejects.toEqual(new GuestError('FilesystemLoop', "Too many levels of symbolic links (os error 40): stat 'loop'"));
    await expect(handlers.readDir({ path: 'notes.txt' }))
      .rejects.toEqual(new GuestError('NotADirectory', "Not a directory (os error 20): readdir 'notes.txt'"));
  });
});

describe('mkdir and remove', () => {
  it('creates folders under the grant, recursively when asked', async () => {
    const { handlers } = bind(grantFolder());
    await handlers.mkdir({ path: 'made', recursive: false, mode: null });
    await handlers.mkdir({ path: 'deep/er/est', recursive: true, mode: null });
    expect((await lstat(path.join(granted, 'deep', 'er', 'est'))).isDirectory()).toBe(true);
    await expect(handlers.mkdir({ path: 'sub', recursive: false, mode: null }))
      .rejects.toEqual(new GuestError('AlreadyExists', "File exists (os error 17): mkdir 'sub'"));
    await expect(handlers.mkdir({ path: 'notes.txt', recursive: true, mode: null }))
      .rejects.toEqual(new GuestError('AlreadyExists', "File exists (os error 17): mkdir 'notes.txt'"));
    await expect(handlers.mkdir({ path: 'q/r', recursive: false, mode: null }))
      .rejects.toEqual(new GuestError('NotFound', "No such file or directory (os error 2): mkdir 'q/r'"));
    await expect(handlers.mkdir({ path: 'notes.txt/x', recursive: false, mode: null }))
      .rejects.toEqual(new GuestError('NotADirectory', "Not a directory (os error 20): mkdir 'notes.txt/x'"));
  });

  it('denies creating a folder outside, also through a symlink', async () => {
    const { handlers } = bind(grantFolder());
    await expect(handlers.mkdir({ path: '../outside/d', recursive: false, mode: null })).rejects.toEqual(denied('write', '../outside/d'));
    await expect(handlers.mkdir({ path: 'escape/d', recursive: true, mode: null })).rejects.toEqual(denied('write', 'escape/d'));
    await expect(lstat(path.join(outside, 'd'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('removes a symlink itself, never its target outside', async () => {
    const { handlers } = bind(grantFolder());
    await handlers.remove({ path: 'escape', recursive: true });
    await expect(lstat(path.join(granted, 'escape'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('secret');
  });

  it('removes files and empty folders; a tree only with recursive', async () => {
    const { handlers } = bind(grantFolder());
    await writeFile(path.join(granted, 'sub', 'f.txt'), 'x');
    await expect(handlers.remove({ path: 'sub', recursive: false }))
      .rejects.toEqual(new GuestError('Error', "Directory not empty (os error 39): remove 'sub'"));
    await handlers.remove({ path: 'sub', recursive: true });
    await handlers.remove({ path: 'notes.txt', recursive: false });
    await expect(handlers.remove({ path: 'missing', recursive: true }))
      .rejects.toEqual(new GuestError('NotFound', "No such file or directory (os error 2): remove 'missing'"));
    await expect(lstat(path.join(granted, 'sub'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('denies removing outside the grant and leaves the file', async () => {
    const { handlers } = bind(grantFolder());
    await expect(handlers.remove({ path: 'escape/secret.txt', recursive: false })).rejects.toEqual(denied('write', 'escape/secret.txt'));
    await expect(handlers.remove({ path: path.join(outside, 'secret.txt'), recursive: false }))
      .rejects.toEqual(denied('write', path.join(outside, 'secret.txt')));
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('secret');
    expect(audit.records.map((record) => [record.capability, record.allowed])).toEqual([['write', false], ['write', false]]);
  });
});

describe('errors a root test run cannot provoke (stand-in file system)', () => {
  const failing = (code: string): FileSystem => ({
    ...nodeFileSystem,
    readFile: () => Promise.reject(Object.assign(new Error(`${code}: at /host/secret/path`), { code })),
    remove: () => Promise.reject(Object.assign(new Error(`${code}: at /host/secret/path`), { code })),
  });

  it('maps EACCES and EPERM to PermissionDenied with Deno\'s text', async () => {
    await expect(bind(grantFolder(), { fileSystem: failing('EACCES') }).handlers.readFile({ path: 'notes.txt' }))
      .rejects.toEqual(new GuestError('PermissionDenied', "Permission denied (os error 13): readfile 'notes.txt'"));
    await expect(bind(grantFolder(), { fileSystem: failing('EPERM') }).handlers.remove({ path: 'notes.txt', recursive: false }))
      .rejects.toEqual(new GuestError('PermissionDenied', "Operation not permitted (os error 1): remove 'notes.txt'"));
  });

  it('passes an error without an errno code through untouched (the bridge hides it)', async () => {
    const broken: FileSystem = { ...nodeFileSystem, readFile: () => Promise.reject(new Error('internal detail')) };
    const error = await bind(grantFolder(), { fileSystem: broken }).handlers.readFile({ path: 'notes.txt' }).catch((thrown: unknown) => thrown);
    expect(error).not.toBeInstanceOf(GuestError);
    expect(error).toEqual(new Error('internal detail'));
  });
});

describe('binding', () => {
  it('answers cwd with the call\'s working directory, without a grant', () => {
    expect(bind(grantFolder({})).handlers.cwd({})).toBe(granted);
    expect(audit.records).toEqual([]);
  });

  it('refuses every handler after revoke, and audits nothing more', async () => {
    const bound = bind(grantFolder());
    bound.revoke();
    const aborted = (operation: string) => new CallError('aborted', `${operation} was used after the call ended.`, { operation });
    await expect(bound.handlers.readFile({ path: 'notes.txt' })).rejects.toEqual(aborted('readFile'));
    await expect(bound.handlers.writeFile(writeArgs('x.txt', bytes('x')))).rejects.toEqual(aborted('writeFile'));
    await expect(bound.handlers.readDir({ path: '.' })).rejects.toEqual(aborted('readDir'));
    await expect(bound.handlers.stat({ path: '.', lstat: false })).rejects.toEqual(aborted('stat'));
    await expect(bound.handlers.mkdir({ path: 'd', recursive: false, mode: null })).rejects.toEqual(aborted('mkdir'));
    await expect(bound.handlers.remove({ path: 'notes.txt', recursive: false })).rejects.toEqual(aborted('remove'));
    expect(() => bound.handlers.cwd({})).toThrow(aborted('cwd'));
    expect(audit.records).toEqual([]);
    await expect(lstat(path.join(granted, 'x.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('binds one call: another binding with a wider grant does not widen this one', async () => {
    const narrow = bind(grantFolder({ read: true }));
    bind({ net: true, read: true, write: true, env: true });
    await expect(narrow.handlers.writeFile(writeArgs('x.txt', bytes('x')))).rejects.toEqual(denied('write', 'x.txt'));
  });
});
