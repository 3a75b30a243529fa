/**
 * Pins: `Deno.permissions.query` answers as `deno run --no-prompt` does with the same flags
 * (observed on Deno 2.9): granted when covered, `prompt` otherwise (also for a whole permission
 * that is only granted as a list), never `denied`, `partial` always false; malformed descriptors
 * throw Deno's errors. The states here mirror runs such as
 * `deno run --no-prompt --allow-net=example.com,[::1]:8080 --allow-read=sub --allow-env=FOO,AWS_*`.
 */
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuestError } from '../../../sandbox/errors.ts';
import { NO_GRANT, normalizeGrant } from '../../../sandbox/grants/grant.ts';
import type { Grant } from '../../../sandbox/grants/grant.ts';
import { permissionState } from '../../../sandbox/grants/permission-state.ts';
import type { PermissionDescriptor } from '../../../sandbox/protocol.ts';
import { makeWorkspace } from './fixtures.ts';
import type { Workspace } from './fixtures.ts';

let workspace: Workspace;
let grant: Grant;
const query = (descriptor: PermissionDescriptor, onGrant: Grant = grant) =>
  permissionState(onGrant, descriptor, { cwd: workspace.root }).then((status) => status.state);

beforeAll(async () => {
  workspace = await makeWorkspace();
  await mkdir(path.join(workspace.root, 'sub'));
  await symlink('/etc', path.join(workspace.root, 'sub', 'etclink'));
  grant = normalizeGrant(
    { net: ['example.com', '[::1]:8080', '10.0.0.0/8', '*.cdn.example.net'], read: ['sub'], write: ['sub'], env: ['FOO', 'AWS_*'] },
    { cwd: workspace.root },
  );
});
afterAll(() => workspace.cleanup());

describe('permissionState with list grants', () => {
  it.each<[PermissionDescriptor, 'granted' | 'prompt']>([
    [{ name: 'net' }, 'prompt'],
    [{ name: 'net', host: 'example.com' }, 'granted'],
    [{ name: 'net', host: 'example.com:443' }, 'granted'],
    [{ name: 'net', host: 'EXAMPLE.com:8080' }, 'granted'],
    [{ name: 'net', host: 'example.com.' }, 'granted'],
    [{ name: 'net', host: 'api.example.com' }, 'prompt'],
    [{ name: 'net', host: '[::1]:8080' }, 'granted'],
    [{ name: 'net', host: '[::1]' }, 'prompt'],
    [{ name: 'net', host: '127.0.0.1' }, 'prompt'],
    [{ name: 'net', host: '10.1.2.3:80' }, 'granted'],
    [{ name: 'net', host: '10.0.0.0/8' }, 'prompt'],
    [{ name: 'net', host: 'img.cdn.example.net:443' }, 'granted'],
    [{ name: 'read' }, 'prompt'],
    [{ name: 'read', path: 'sub' }, 'granted'],
    [{ name: 'read', path: 'sub/a.txt' }, 'granted'],
    [{ name: 'read', path: '.' }, 'prompt'],
    [{ name: 'read', path: '/tmp' }, 'prompt'],
    [{ name: 'read', path: 'nope/x' }, 'prompt'],
    [{ name: 'write' }, 'prompt'],
    [{ name: 'write', path: 'sub' }, 'granted'],
    [{ name: 'write', path: '/' }, 'prompt'],
    [{ name: 'env' }, 'prompt'],
    [{ name: 'env', variable: 'FOO' }, 'granted'],
    [{ name: 'env', variable: 'foo' }, 'prompt'],
    [{ name: 'env', variable: 'AWS_KEY' }, 'granted'],
    [{ name: 'env', variable: 'AWS_*' }, 'granted'],
    [{ name: 'env', variable: 'BAR' }, 'prompt'],
    [{ name: 'run' }, 'prompt'],
    [{ name: 'sys' }, 'prompt'],
    [{ name: 'ffi' }, 'prompt'],
    [{ name: 'import' }, 'prompt'],
  ])('%j is %s', async (descriptor, state) => {
    expect(await permissionState(grant, descriptor, { cwd: workspace.root })).toEqual({ state, partial: false });
  });

  it('resolves real paths, unlike Deno: a symlink out of the granted folder is not granted', async () => {
    // Deno 2.9 answers "granted" here (it compares paths lexically); Paddock answers what its check at use would do.
    expect(await query({ name: 'read', path: 'sub/etclink/hostname' })).toBe('prompt');
  });

  it('ignores fields of the wrong type, as Deno does', async () => {
    expect(await query({ name: 'net', host: 5 } as unknown as PermissionDescriptor)).toBe('prompt');
    expect(await query({ name: 'net', host: 5 } as unknown as PermissionDescriptor, { ...NO_GRANT, net: true })).toBe('granted');
  });
});

describe('permissionState with everything or nothing granted', () => {
  const all: Grant = { net: true, read: true, write: true, env: true };

  it('is granted for every descriptor under true', async () => {
    for (const descriptor of [{ name: 'net' }, { name: 'net', host: 'x.com:1' }, { name: 'read', path: '/etc' }, { name: 'env' }, { name: 'env', variable: 'X' }]) {
      expect(await query(descriptor, all)).toBe('granted');
    }
    expect(await query({ name: 'run' }, all)).toBe('prompt');
  });

  it('is prompt for every descriptor without a grant', async () => {
    for (const descriptor of [{ name: 'net' }, { name: 'net', host: 'x.com' }, { name: 'read', path: 'sub' }, { name: 'write' }, { name: 'env', variable: '' }]) {
      expect(await query(descriptor, NO_GRANT)).toBe('prompt');
    }
  });
});

describe('permissionState on malformed descriptors', () => {
  it.each<[unknown, GuestError]>([
    [{ name: 'hrtime' }, new GuestError('TypeError', 'The provided value "hrtime" is not a valid permission name')],
    [{}, new GuestError('TypeError', 'The provided value "undefined" is not a valid permission name')],
    [{ name: 'net', host: '' }, new GuestError('URIError', "invalid empty host: ''")],
    [{ name: 'net', host: 'bad host' }, new GuestError('URIError', "invalid host 'bad host': invalid char found in FQDN")],
    [{ name: 'net', host: 'example.com:99999' }, new GuestError('URIError', "invalid port in 'example.com:99999': '99999'")],
    [{ name: 'net', host: 'http://example.com' }, new GuestError('URIError', "invalid value 'http://example.com': URLs are not supported, only domains and IPs")],
    [{ name: 'net', host: '::1' }, new GuestError('URIError', "invalid empty host: ''")],
    [{ name: 'net', host: '*.example.com' }, new GuestError('URIError', "invalid host '*.example.com': invalid char found in FQDN")],
    [{ name: 'read', path: '' }, new GuestError('Error', 'Empty path is not allowed')],
  ])('%j throws Deno\'s error, even under net: true', async (descriptor, expected) => {
    for (const onGrant of [grant, { net: true, read: true, write: true, env: true } satisfies Grant]) {
      await expect(permissionState(onGrant, descriptor as PermissionDescriptor, { cwd: workspace.root })).rejects.toEqual(expected);
    }
  });
});
