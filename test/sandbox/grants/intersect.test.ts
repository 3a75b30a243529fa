/**
 * Pins: a call's grant is declared ∩ policy (∩ narrowing). A tool never obtains more than the
 * policy allows; `true ∩ list = list`; the narrower entry survives (deeper path, host with port,
 * name inside a wildcard or subnet, variable inside a prefix pattern). Malformed inputs fail with
 * a precise InvalidGrantError.
 */
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidGrantError, normalizeGrant } from '../../../sandbox/grants/grant.ts';
import type { Grant } from '../../../sandbox/grants/grant.ts';
import { intersectGrants, resolveGrant } from '../../../sandbox/grants/intersect.ts';
import { makeWorkspace } from './fixtures.ts';
import type { Workspace } from './fixtures.ts';

// Pure tests: paths are taken lexically, so no file system is involved.
const lexical = { cwd: '/work', resolvePath: (cwd: string, entry: string) => path.resolve(cwd, entry) };
const grant = (input: Partial<Record<keyof Grant, boolean | string[]>>) => normalizeGrant(input, lexical);

describe('intersectGrants', () => {
  it('gives the policy\'s part when a tool declares more', () => {
    const declared = grant({ net: true, read: true, write: ['/'], env: true });
    const policy = grant({ net: ['api.example.com'], read: ['/data'], write: [], env: ['WEATHER_KEY'] });
    expect(intersectGrants(declared, policy)).toEqual({ net: ['api.example.com'], read: ['/data'], write: [], env: ['WEATHER_KEY'] });
  });

  it('is symmetric and keeps `true` only when both sides say it', () => {
    const a = grant({ net: true, read: ['/a'] });
    const b = grant({ net: true, read: true });
    expect(intersectGrants(a, b)).toEqual({ net: true, read: ['/a'], write: [], env: [] });
    expect(intersectGrants(b, a)).toEqual(intersectGrants(a, b));
  });

  it('keeps the deeper path when one contains the other, and drops disjoint ones', () => {
    const a = grant({ read: ['/data', '/srv/www/site', '/etc'] });
    const b = grant({ read: ['/data/reports', '/srv/www', '/home'] });
    expect(intersectGrants(a, b).read).toEqual(['/data/reports', '/srv/www/site']);
  });

  it('does not treat a name prefix as containment (/data vs /database)', () => {
    expect(intersectGrants(grant({ read: ['/data'] }), grant({ read: ['/database'] })).read).toEqual([]);
  });

  it('meets host and host:port at the port', () => {
    const host = grant({ net: ['example.com'] });
    const hostPort = grant({ net: ['example.com:443'] });
    expect(intersectGrants(host, hostPort).net).toEqual(['example.com:443']);
    expect(intersectGrants(hostPort, host).net).toEqual(['example.com:443']);
    expect(intersectGrants(hostPort, grant({ net: ['example.com:80'] })).net).toEqual([]);
    expect(intersectGrants(host, grant({ net: ['other.com'] })).net).toEqual([]);
  });

  it('keeps the name inside a wildcard, and the narrower of two wildcards', () => {
    const wildcard = grant({ net: ['*.example.com'] });
    expect(intersectGrants(wildcard, grant({ net: ['api.example.com:443', 'evil.com'] })).net).toEqual(['api.example.com:443']);
    expect(intersectGrants(wildcard, grant({ net: ['*.eu.example.com'] })).net).toEqual(['*.eu.example.com']);
    expect(intersectGrants(wildcard, grant({ net: ['example.com'] })).net).toEqual(['example.com']);
  });

  it('keeps the address inside a subnet, never a name', () => {
    const subnet = grant({ net: ['10.0.0.0/8'] });
    expect(intersectGrants(subnet, grant({ net: ['10.1.2.3:5432', '192.168.0.1', 'db.internal'] })).net).toEqual(['10.1.2.3:5432']);
    expect(intersectGrants(subnet, grant({ net: ['10.1.0.0/16'] })).net).toEqual(['10.1.0.0/16']);
  });

  it('keeps a variable inside a prefix pattern, and the narrower of two patterns', () => {
    const pattern = grant({ env: ['AWS_*'] });
    expect(intersectGrants(pattern, grant({ env: ['AWS_KEY', 'HOME'] })).env).toEqual(['AWS_KEY']);
    expect(intersectGrants(pattern, grant({ env: ['AWS_S3_*'] })).env).toEqual(['AWS_S3_*']);
    expect(intersectGrants(pattern, grant({ env: ['aws_key'] })).env).toEqual([]);
  });

  it('returns frozen grants', () => {
    const result = intersectGrants(grant({ read: ['/a'] }), grant({ read: true }));
    expect(Object.isFrozen(result)).toBe(true);
    expect(Object.isFrozen(result.read)).toBe(true);
  });
});

describe('resolveGrant', () => {
  it('intersects declared, policy and the request\'s narrowing', () => {
    const result = resolveGrant(
      { net: ['api.open-meteo.com', 'example.com'], env: ['WEATHER_KEY'] },
      { net: true, read: true, env: true },
      { net: ['api.open-meteo.com:443'] },
      lexical,
    );
    expect(result).toEqual({ net: ['api.open-meteo.com:443'], read: [], write: [], env: [] });
  });

  it('leaves the grant alone when the request does not narrow', () => {
    const result = resolveGrant({ read: ['data'] }, { read: true }, undefined, lexical);
    expect(result).toEqual({ net: [], read: ['/work/data'], write: [], env: [] });
  });

  it('never widens: a narrowing that asks for more gets what was granted', () => {
    const result = resolveGrant({ net: ['a.com'] }, { net: ['a.com'] }, { net: true, read: true }, lexical);
    expect(result).toEqual({ net: ['a.com'], read: [], write: [], env: [] });
  });

  it('reads `false` and absent keys as nothing', () => {
    expect(resolveGrant({ net: false }, { net: true }, undefined, lexical).net).toEqual([]);
    expect(resolveGrant({}, { net: true, read: true, write: true, env: true }, undefined, lexical))
      .toEqual({ net: [], read: [], write: [], env: [] });
  });
});

describe('normalizeGrant', () => {
  it('normalises, deduplicates and drops entries another entry covers', () => {
    const result = grant({
      net: ['Example.com', 'example.com:443', 'EXAMPLE.COM', ':8000'],
      read: ['/data', '/data/sub', 'rel/../data'],
      env: ['AWS_*', 'AWS_KEY', 'HOME', 'HOME'],
    });
    expect(result).toEqual({
      net: ['example.com', '0.0.0.0:8000', '127.0.0.1:8000', 'localhost:8000'],
      read: ['/data', '/work/data'],
      write: [],
      env: ['AWS_*', 'HOME'],
    });
  });

  it('keeps the first of two entries that allow the same targets', () => {
    expect(grant({ net: ['10.0.0.0/8', '10.1.2.3/8', '10.0.0.0/16'] }).net).toEqual(['10.0.0.0/8']);
  });

  it('is idempotent', () => {
    const once = grant({ net: ['[::ffff:10.0.0.1]:80', '*.Example.com'], read: ['x'], env: ['A*'] });
    expect(normalizeGrant(once, lexical)).toEqual(once);
  });

  it.each([
    [null, 'Permissions must be an object with optional net, read, write and env keys.', undefined, undefined],
    [['net'], 'Permissions must be an object with optional net, read, write and env keys.', undefined, undefined],
    [{ run: true }, 'Unknown permission "run": Paddock grants only net, read, write and env.', 'run', undefined],
    [{ net: 'example.com' }, 'Permission "net" must be true, false or a list of strings.', 'net', undefined],
    [{ env: [42] }, 'Permission "env" entry 0 must be a string.', 'env', undefined],
    [{ env: new Array<string>(1001).fill('A') }, 'Permission "env" lists 1001 entries; at most 1000 are allowed.', 'env', undefined],
    [{ net: ['ok.com', 'bad host'] }, "invalid host 'bad host': invalid char found in FQDN", 'net', 'bad host'],
    [{ read: [''] }, 'Empty path is not allowed', 'read', ''],
    [{ write: [''] }, 'Empty path is not allowed', 'write', ''],
    [{ read: ['a\0b'] }, 'file name contained an unexpected NUL byte', 'read', 'a\0b'],
    [{ env: [''] }, 'Empty env not allowed', 'env', ''],
    [{ env: ['A=B'] }, "invalid env var name: 'A=B'", 'env', 'A=B'],
  ])('refuses %j', (input, message, permission, entry) => {
    let thrown: unknown;
    try {
      normalizeGrant(input, lexical);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidGrantError);
    expect(thrown).toMatchObject({ message, permission, entry });
  });

  it('accepts run/sys/ffi set to false (nothing asked, nothing granted)', () => {
    expect(normalizeGrant({ run: false, net: ['a.com'] }, lexical).net).toEqual(['a.com']);
  });
});

describe('normalizeGrant on a real file system', () => {
  let workspace: Workspace;
  beforeAll(async () => {
    workspace = await makeWorkspace();
    await mkdir(path.join(workspace.root, 'real', 'deep'), { recursive: true });
    await symlink(path.join(workspace.root, 'real'), path.join(workspace.root, 'alias'));
  });
  afterAll(() => workspace.cleanup());

  it('resolves relative entries against cwd to real paths, through symlinks', () => {
    const result = normalizeGrant({ read: ['alias/deep', './alias/../real'] }, { cwd: workspace.root });
    expect(result.read).toEqual([path.join(workspace.root, 'real')]);
  });

  it('keeps a path that does not exist yet, under its real parent', () => {
    const result = normalizeGrant({ write: ['alias/new/file.txt'] }, { cwd: workspace.root });
    expect(result.write).toEqual([path.join(workspace.root, 'real', 'new', 'file.txt')]);
  });

  it('intersects by real path: a symlinked spelling meets its target', () => {
    const result = resolveGrant({ read: ['alias/deep'] }, { read: ['real'] }, undefined, { cwd: workspace.root });
    expect(result.read).toEqual([path.join(workspace.root, 'real', 'deep')]);
  });
});
