/**
 * Pins: checks at the point of use. Paths are resolved to real paths before the check (symlinks
 * followed, `..` taken physically, relative to cwd), so no spelling escapes the granted folder; a
 * path that does not exist yet resolves under its deepest existing parent. Denials are Deno's exact
 * NotCapable messages, naming the path as the program wrote it (absolute paths normalised).
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuestError } from '../../../sandbox/errors.ts';
import {
  checkEnv, checkNet, checkPathAccess, checkRead, checkWrite, displayPath, isLiteralAddressGranted,
} from '../../../sandbox/grants/check.ts';
import { NO_GRANT, normalizeGrant } from '../../../sandbox/grants/grant.ts';
import type { Grant } from '../../../sandbox/grants/grant.ts';
import { notCapable } from '../../../sandbox/grants/not-capable.ts';
import { makeWorkspace } from './fixtures.ts';
import type { Workspace } from './fixtures.ts';

const denied = (name: 'net' | 'read' | 'write' | 'env', target: string) =>
  new GuestError('NotCapable', `Requires ${name} access to "${target}", run again with the --allow-${name} flag`);

async function rejection(promise: Promise<unknown>): Promise<GuestError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GuestError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('notCapable', () => {
  it('builds Deno\'s messages', () => {
    expect(notCapable('net', 'example.com:443').message)
      .toBe('Requires net access to "example.com:443", run again with the --allow-net flag');
    expect(notCapable('read', 'notes.txt').message).toBe('Requires read access to "notes.txt", run again with the --allow-read flag');
    expect(notCapable('write', '/tmp/out.txt').message).toBe('Requires write access to "/tmp/out.txt", run again with the --allow-write flag');
    expect(notCapable('env', 'HOME').message).toBe('Requires env access to "HOME", run again with the --allow-env flag');
    expect(notCapable('env').message).toBe('Requires env access, run again with the --allow-env flag');
    expect(notCapable('read', 'notes.txt').guestName).toBe('NotCapable');
  });

  it('leaves a target already in angle brackets unquoted, as Deno does', () => {
    expect(notCapable('read', '<x>').message).toBe('Requires read access to <x>, run again with the --allow-read flag');
  });
});

describe('checkNet', () => {
  const grant = normalizeGrant({ net: ['api.example.com', 'example.com:443', '*.cdn.example.net', '10.0.0.0/8:5432', ':8000'] }, { cwd: '/' });

  it.each([
    ['api.example.com', 443, 'api.example.com:443'],
    ['API.Example.com.', 8080, 'api.example.com:8080'],
    ['example.com', 443, 'example.com:443'],
    ['cdn.example.net', 443, 'cdn.example.net:443'],
    ['img.eu.cdn.example.net', 80, 'img.eu.cdn.example.net:80'],
    ['10.20.30.40', 5432, '10.20.30.40:5432'],
    ['localhost', 8000, 'localhost:8000'],
  ])('allows %s:%i', (hostname, port, target) => {
    expect(checkNet(grant, hostname, port)).toBe(target);
  });

  it.each([
    ['example.com', 80, 'example.com:80'],
    ['www.example.com', 443, 'www.example.com:443'],
    ['example.net', 443, 'example.net:443'],
    ['10.20.30.40', 80, '10.20.30.40:80'],
    ['[::1]', 8000, '[::1]:8000'],
    ['[::ffff:127.0.0.1]', 8001, '127.0.0.1:8001'],
  ])('denies %s:%i with Deno\'s message', (hostname, port, target) => {
    expect(() => checkNet(grant, hostname, port)).toThrow(denied('net', target));
  });

  it('allows everything under net: true', () => {
    expect(checkNet({ ...NO_GRANT, net: true }, 'anything.example', 1234)).toBe('anything.example:1234');
  });
});

describe('isLiteralAddressGranted', () => {
  const grant = normalizeGrant({ net: ['127.0.0.1:8080', '[::1]', '10.0.0.0/8:5432', 'localhost', '169.254.169.254:80'] }, { cwd: '/' });

  it('is true only for a literal address (or subnet) in the grant, port included', () => {
    expect(isLiteralAddressGranted(grant, '127.0.0.1', 8080)).toBe(true);
    expect(isLiteralAddressGranted(grant, '127.0.0.1', 8081)).toBe(false);
    expect(isLiteralAddressGranted(grant, '::ffff:127.0.0.1', 8080)).toBe(true);
    expect(isLiteralAddressGranted(grant, '[::1]', 9)).toBe(true);
    expect(isLiteralAddressGranted(grant, '::1', 9)).toBe(true);
    expect(isLiteralAddressGranted(grant, 'fe80::1%eth0', 9)).toBe(false);
    expect(isLiteralAddressGranted(grant, '10.9.9.9', 5432)).toBe(true);
    expect(isLiteralAddressGranted(grant, '10.9.9.9', 22)).toBe(false);
    expect(isLiteralAddressGranted(grant, '169.254.169.254', 80)).toBe(true);
    expect(isLiteralAddressGranted(grant, '192.168.1.1', 80)).toBe(false);
  });

  it('does not count host names (localhost) or net: true', () => {
    expect(isLiteralAddressGranted(grant, '127.0.0.2', 80)).toBe(false);
    expect(isLiteralAddressGranted({ ...NO_GRANT, net: true }, '127.0.0.1', 80)).toBe(false);
    expect(isLiteralAddressGranted(grant, 'not-an-ip', 80)).toBe(false);
  });
});

describe('checkEnv', () => {
  const grant = normalizeGrant({ env: ['WEATHER_KEY', 'AWS_*'] }, { cwd: '/' });

  it('allows a listed name and names matching a prefix pattern', () => {
    expect(() => { checkEnv(grant, 'WEATHER_KEY'); }).not.toThrow();
    expect(() => { checkEnv(grant, 'AWS_SECRET_ACCESS_KEY'); }).not.toThrow();
    expect(() => { checkEnv(grant, 'AWS_'); }).not.toThrow();
  });

  it('denies other names, case-sensitively, with Deno\'s message', () => {
    expect(() => { checkEnv(grant, 'HOME'); }).toThrow(denied('env', 'HOME'));
    expect(() => { checkEnv(grant, 'weather_key'); }).toThrow(denied('env', 'weather_key'));
    expect(() => { checkEnv(grant, 'AWS'); }).toThrow(denied('env', 'AWS'));
  });
});

describe('checkRead / checkWrite on a real file system', () => {
  let workspace: Workspace;
  let granted: string;
  let grant: Grant;

  beforeAll(async () => {
    workspace = await makeWorkspace();
    granted = path.join(workspace.root, 'granted');
    const outside = path.join(workspace.root, 'outside');
    await mkdir(path.join(granted, 'sub'), { recursive: true });
    await mkdir(outside);
    await writeFile(path.join(granted, 'notes.txt'), 'hello');
    await writeFile(path.join(outside, 'secret.txt'), 'secret');
    await symlink('../outside', path.join(granted, 'escape'));
    await symlink(path.join(outside, 'planted.txt'), path.join(granted, 'dangling'));
    await symlink('sub', path.join(granted, 'inner'));
    await symlink('loop', path.join(granted, 'loop'));
    grant = normalizeGrant({ read: [granted], write: [granted] }, { cwd: workspace.root });
  });
  afterAll(() => workspace.cleanup());

  it('allows a file inside the granted folder, relative to cwd, and returns its real path', async () => {
    expect(await checkRead(grant, 'notes.txt', granted)).toBe(path.join(granted, 'notes.txt'));
    expect(await checkRead(grant, './sub/../notes.txt', granted)).toBe(path.join(granted, 'notes.txt'));
    expect(await checkRead(grant, path.join(granted, 'notes.txt'), '/')).toBe(path.join(granted, 'notes.txt'));
  });

  it('follows a symlink that stays inside', async () => {
    expect(await checkRead(grant, 'inner/../notes.txt', granted)).toBe(path.join(granted, 'notes.txt'));
  });

  it('denies a `..` escape, naming the path as written', async () => {
    expect(await rejection(checkRead(grant, '../outside/secret.txt', granted))).toEqual(denied('read', '../outside/secret.txt'));
    expect(await rejection(checkRead(grant, 'sub/../../outside/secret.txt', granted)))
      .toEqual(denied('read', 'sub/../../outside/secret.txt'));
  });

  it('denies a symlink pointing outside the granted folder', async () => {
    expect(await rejection(checkRead(grant, 'escape/secret.txt', granted))).toEqual(denied('read', 'escape/secret.txt'));
    expect(await rejection(checkWrite(grant, 'escape/new.txt', granted))).toEqual(denied('write', 'escape/new.txt'));
  });

  it('takes `..` after a symlink physically, as the kernel does', async () => {
    // escape -> ../outside, so escape/.. is the workspace root, not the granted folder.
    expect(await rejection(checkRead(grant, 'escape/../granted/../outside/secret.txt', granted)))
      .toEqual(denied('read', 'escape/../granted/../outside/secret.txt'));
    expect(await checkRead(grant, 'escape/../granted/notes.txt', granted)).toBe(path.join(granted, 'notes.txt'));
  });

  it('denies writing through a dangling symlink whose target is outside (the write would create it there)', async () => {
    expect(await rejection(checkWrite(grant, 'dangling', granted))).toEqual(denied('write', 'dangling'));
  });

  it('allows a path that does not exist yet under the granted folder, for write', async () => {
    expect(await checkWrite(grant, 'new/deeper/file.txt', granted)).toBe(path.join(granted, 'new', 'deeper', 'file.txt'));
    expect(await checkWrite(grant, 'inner/new.txt', granted)).toBe(path.join(granted, 'sub', 'new.txt'));
  });

  it('reports `..` past a missing folder as ENOENT instead of collapsing it', async () => {
    const result = await checkPathAccess(grant, 'read', 'missing/../notes.txt', granted);
    expect(result.error).toBe('ENOENT');
    expect(await rejection(checkRead(grant, 'missing/../../outside/secret.txt', granted)))
      .toEqual(denied('read', 'missing/../../outside/secret.txt'));
  });

  it('checks the link itself when the last symlink is not followed (lstat, remove, mkdir)', async () => {
    const result = await checkPathAccess(grant, 'write', 'escape', granted, { followFinal: false });
    expect(result).toEqual({ path: path.join(granted, 'escape'), error: undefined });
    expect(await rejection(checkPathAccess(grant, 'write', 'escape', granted))).toEqual(denied('write', 'escape'));
  });

  it('names an absolute path normalised, as Deno does', async () => {
    const asked = `${workspace.root}/granted/../outside//secret.txt`;
    expect(await rejection(checkRead(grant, asked, granted))).toEqual(denied('read', `${workspace.root}/outside/secret.txt`));
    expect(displayPath('rel/../x/')).toBe('rel/../x/');
  });

  it('stops at a component it cannot walk and says why', async () => {
    expect((await checkPathAccess(grant, 'read', 'notes.txt/x', granted)).error).toBe('ENOTDIR');
    expect((await checkPathAccess(grant, 'read', 'notes.txt/', granted)).error).toBe('ENOTDIR');
    expect((await checkPathAccess(grant, 'read', 'loop', granted)).error).toBe('ELOOP');
    expect((await checkPathAccess(grant, 'read', 'a\0b', granted)).error).toBe('ENUL');
    expect((await checkPathAccess(grant, 'read', 'sub/', granted)).error).toBeUndefined();
  });

  it('refuses an empty path with Deno\'s error', async () => {
    expect(await rejection(checkRead(grant, '', granted))).toEqual(new GuestError('Error', 'Empty path is not allowed'));
  });

  it('denies everything without a grant and allows everything with read: true', async () => {
    expect(await rejection(checkRead(NO_GRANT, 'notes.txt', granted))).toEqual(denied('read', 'notes.txt'));
    expect(await checkRead({ ...NO_GRANT, read: true }, '../outside/secret.txt', granted))
      .toBe(path.join(workspace.root, 'outside', 'secret.txt'));
  });

  it('does not let a read grant write', async () => {
    const readOnly = normalizeGrant({ read: [granted] }, { cwd: '/' });
    expect(await rejection(checkWrite(readOnly, 'notes.txt', granted))).toEqual(denied('write', 'notes.txt'));
  });
});
