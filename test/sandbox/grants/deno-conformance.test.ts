/**
 * Pins: Paddock's denial messages, fs error messages, env answers and permission states are byte
 * for byte what real Deno 2 prints for the same program under the same flags. Each probe runs once
 * under `deno run --no-prompt` (the project's pinned Deno) and once through Paddock's grant and
 * capability functions with the grant those flags describe; the outcomes must be equal.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { denoBinary } from '../../../scripts/deno-binary.ts';
import { bindEnv } from '../../../sandbox/capabilities/env.ts';
import { bindFs } from '../../../sandbox/capabilities/fs.ts';
import { GuestError } from '../../../sandbox/errors.ts';
import { checkNet } from '../../../sandbox/grants/check.ts';
import { normalizeGrant } from '../../../sandbox/grants/grant.ts';
import type { Grant } from '../../../sandbox/grants/grant.ts';
import { permissionState } from '../../../sandbox/grants/permission-state.ts';
import type { PermissionDescriptor } from '../../../sandbox/protocol.ts';
import { IDENTITY, makeWorkspace, recordingSink } from './fixtures.ts';
import type { Workspace } from './fixtures.ts';

const DENO = denoBinary();
const SECRETS = { FOO: 'foo-value', AWS_KEY: 'aws-value', OTHER: 'other-value' };

type Outcome = { ok: unknown } | { error: [name: string, message: string] };

interface Capabilities {
  readonly grant: Grant;
  readonly cwd: string;
  readonly fs: ReturnType<typeof bindFs>['handlers'];
  readonly env: ReturnType<typeof bindEnv>['handlers'];
}

/** One program step: its Deno source (an async function body) and what Paddock does for it. */
interface Probe {
  readonly deno: string;
  readonly paddock: (caps: Capabilities) => unknown;
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const fetchTarget = (caps: Capabilities, url: string) => {
  const parsed = new URL(url);
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return checkNet(caps.grant, parsed.hostname, port);
};
const query = (caps: Capabilities, descriptor: PermissionDescriptor) => permissionState(caps.grant, descriptor, { cwd: caps.cwd });
const write = (target: string) => ({ path: target, data: new TextEncoder().encode('x'), append: false, create: true, createNew: false, mode: null });

/** Run with no permission flags: every operation is denied. */
const DENIED_PROBES = (workspace: string): Record<string, Probe> => ({
  'net host:port': { deno: 'await fetch("https://example.com/")', paddock: (caps) => fetchTarget(caps, 'https://example.com/') },
  'net explicit port': { deno: 'await fetch("http://EXAMPLE.com:8080/x")', paddock: (caps) => fetchTarget(caps, 'http://EXAMPLE.com:8080/x') },
  'net ipv6': { deno: 'await fetch("http://[::1]:8080/")', paddock: (caps) => fetchTarget(caps, 'http://[::1]:8080/') },
  'read relative': { deno: 'return await Deno.readTextFile("sub/a.txt")', paddock: async (caps) => text(await caps.fs.readFile({ path: 'sub/a.txt' })) },
  'read relative with ..': {
    deno: 'return await Deno.readTextFile("./sub/../sub/a.txt")',
    paddock: async (caps) => text(await caps.fs.readFile({ path: './sub/../sub/a.txt' })),
  },
  'read absolute': {
    deno: `return await Deno.readTextFile(${JSON.stringify(`${workspace}/sub/..//sub/./a.txt`)})`,
    paddock: async (caps) => text(await caps.fs.readFile({ path: `${workspace}/sub/..//sub/./a.txt` })),
  },
  'stat': { deno: 'await Deno.stat("sub")', paddock: (caps) => caps.fs.stat({ path: 'sub', lstat: false }) },
  'readDir': { deno: 'for await (const _ of Deno.readDir("sub")) break', paddock: (caps) => caps.fs.readDir({ path: 'sub' }) },
  'write relative': { deno: 'await Deno.writeTextFile("sub/new.txt", "x")', paddock: (caps) => caps.fs.writeFile(write('sub/new.txt')) },
  'write absolute': {
    deno: `await Deno.writeTextFile(${JSON.stringify(`${workspace}/new.txt`)}, "x")`,
    paddock: (caps) => caps.fs.writeFile(write(`${workspace}/new.txt`)),
  },
  'mkdir': { deno: 'await Deno.mkdir("sub/d")', paddock: (caps) => caps.fs.mkdir({ path: 'sub/d', recursive: false, mode: null }) },
  'remove': { deno: 'await Deno.remove("sub/a.txt")', paddock: (caps) => caps.fs.remove({ path: 'sub/a.txt', recursive: false }) },
  'env get': { deno: 'return Deno.env.get("FOO")', paddock: (caps) => caps.env.envGet({ name: 'FOO' }) },
  'env toObject': { deno: 'return Deno.env.toObject()', paddock: (caps) => caps.env.envToObject({}) },
  'query net': { deno: 'return await Deno.permissions.query({ name: "net", host: "example.com" })', paddock: (caps) => query(caps, { name: 'net', host: 'example.com' }) },
  'query read': { deno: 'return await Deno.permissions.query({ name: "read" })', paddock: (caps) => query(caps, { name: 'read' }) },
});

const GRANT_FLAGS = ['--allow-net=example.com,[::1]:8080,*.cdn.example.net', '--allow-read=sub', '--allow-write=sub', '--allow-env=FOO,AWS_*'];

/** Run with GRANT_FLAGS: partial grants, fs errors inside the grant, env answers. */
const GRANTED_PROBES: Record<string, Probe> = {
  'read granted': { deno: 'return await Deno.readTextFile("sub/a.txt")', paddock: async (caps) => text(await caps.fs.readFile({ path: 'sub/a.txt' })) },
  'read outside': { deno: 'return await Deno.readTextFile("other.txt")', paddock: async (caps) => text(await caps.fs.readFile({ path: 'other.txt' })) },
  'read missing': { deno: 'return await Deno.readTextFile("sub/missing.txt")', paddock: async (caps) => text(await caps.fs.readFile({ path: 'sub/missing.txt' })) },
  'read folder': { deno: 'return await Deno.readTextFile("sub")', paddock: async (caps) => text(await caps.fs.readFile({ path: 'sub' })) },
  'read through file': { deno: 'return await Deno.readTextFile("sub/a.txt/x")', paddock: async (caps) => text(await caps.fs.readFile({ path: 'sub/a.txt/x' })) },
  'stat missing': { deno: 'await Deno.stat("sub/zz")', paddock: (caps) => caps.fs.stat({ path: 'sub/zz', lstat: false }) },
  'mkdir existing': { deno: 'await Deno.mkdir("sub")', paddock: (caps) => caps.fs.mkdir({ path: 'sub', recursive: false, mode: null }) },
  'write new file': { deno: 'await Deno.writeTextFile("sub/made.txt", "x")', paddock: (caps) => caps.fs.writeFile(write('sub/made.txt')) },
  'write outside': { deno: 'await Deno.writeTextFile("made.txt", "x")', paddock: (caps) => caps.fs.writeFile(write('made.txt')) },
  'remove non-empty': { deno: 'await Deno.remove("sub")', paddock: (caps) => caps.fs.remove({ path: 'sub', recursive: false }) },
  'env granted': { deno: 'return Deno.env.get("FOO")', paddock: (caps) => caps.env.envGet({ name: 'FOO' }) },
  'env by pattern': { deno: 'return Deno.env.get("AWS_KEY")', paddock: (caps) => caps.env.envGet({ name: 'AWS_KEY' }) },
  'env granted unset': { deno: 'return Deno.env.get("AWS_UNSET") ?? null', paddock: (caps) => caps.env.envGet({ name: 'AWS_UNSET' }) },
  'env denied': { deno: 'return Deno.env.get("OTHER")', paddock: (caps) => caps.env.envGet({ name: 'OTHER' }) },
  'env toObject partial': { deno: 'return Deno.env.toObject()', paddock: (caps) => caps.env.envToObject({}) },
  'net other port': { deno: 'await fetch("http://[::1]:9090/")', paddock: (caps) => fetchTarget(caps, 'http://[::1]:9090/') },
  'net outside wildcard': { deno: 'await fetch("https://cdn.example.net.evil.com/")', paddock: (caps) => fetchTarget(caps, 'https://cdn.example.net.evil.com/') },
  ...Object.fromEntries(([
    { name: 'net' }, { name: 'net', host: 'example.com:443' }, { name: 'net', host: 'api.example.com' },
    { name: 'net', host: 'img.cdn.example.net' }, { name: 'net', host: '[::1]' }, { name: 'net', host: '[::1]:8080' },
    { name: 'read' }, { name: 'read', path: 'sub' }, { name: 'read', path: 'sub/a.txt' }, { name: 'read', path: '.' },
    { name: 'write', path: 'sub/new/deeper.txt' }, { name: 'write', path: '/' },
    { name: 'env' }, { name: 'env', variable: 'FOO' }, { name: 'env', variable: 'AWS_ANYTHING' }, { name: 'env', variable: 'OTHER' },
    { name: 'run' }, { name: 'hrtime' }, { name: 'net', host: 'bad host' }, { name: 'read', path: '' },
  ] satisfies PermissionDescriptor[]).map((descriptor): [string, Probe] => [`query ${JSON.stringify(descriptor)}`, {
    deno: `return await Deno.permissions.query(${JSON.stringify(descriptor)})`,
    paddock: (caps) => query(caps, descriptor),
  }])),
};

function denoScript(probes: Record<string, Probe>): string {
  const steps = Object.entries(probes).map(([name, probe]) => `[${JSON.stringify(name)}, async () => { ${probe.deno} }]`);
  return `const out = {};
for (const [name, run] of [${steps.join(',\n')}]) {
  try {
    const value = await run();
    out[name] = { ok: value instanceof Deno.PermissionStatus ? { state: value.state, partial: value.partial } : value ?? null };
  } catch (error) {
    out[name] = { error: [error.name, error.message] };
  }
}
console.log(JSON.stringify(out));
`;
}

async function runDeno(workspace: Workspace, script: string, flags: string[]): Promise<Record<string, Outcome>> {
  const file = path.join(workspace.root, `probe-${flags.length}.js`);
  await writeFile(file, script);
  const { stdout } = await promisify(execFile)(DENO, ['run', '--no-prompt', '--no-config', '--no-lock', '--quiet', ...flags, file], {
    cwd: workspace.root,
    timeout: 15_000,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DENO_DIR: path.join(workspace.root, '.deno'), NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', ...SECRETS },
  });
  return JSON.parse(stdout) as Record<string, Outcome>;
}

async function runPaddock(workspace: Workspace, probes: Record<string, Probe>, grant: Grant): Promise<Record<string, Outcome>> {
  const deps = { cwd: workspace.root, audit: recordingSink(), maxReadBytes: 1 << 20, maxWriteBytes: 1 << 20 };
  const caps: Capabilities = {
    grant,
    cwd: workspace.root,
    fs: bindFs(grant, IDENTITY, deps).handlers,
    env: bindEnv(grant, IDENTITY, { secrets: SECRETS, audit: deps.audit }).handlers,
  };
  const out: Record<string, Outcome> = {};
  // In order, like the Deno script: some probes change the workspace the next ones see.
  for (const [name, probe] of Object.entries(probes)) {
    try {
      const value = await probe.paddock(caps);
      out[name] = { ok: value === undefined ? null : value };
    } catch (error) {
      if (!(error instanceof GuestError)) throw error;
      out[name] = { error: [error.guestName, error.message] };
    }
  }
  return out;
}

/** The grant `deno run` gets from GRANT_FLAGS, as Paddock normalises it. */
function grantFromFlags(flags: readonly string[], cwd: string): Grant {
  const input: Record<string, string[]> = {};
  for (const flag of flags) {
    const [, name = '', values = ''] = /^--allow-(\w+)=(.*)$/.exec(flag) ?? [];
    input[name] = values.split(',');
  }
  return normalizeGrant(input, { cwd });
}

describe('conformance with real Deno', () => {
  const workspaces: Workspace[] = [];
  const results: Record<string, { deno: Record<string, Outcome>; paddock: Record<string, Outcome> }> = {};

  async function prepare(): Promise<Workspace> {
    const workspace = await makeWorkspace();
    workspaces.push(workspace);
    await mkdir(path.join(workspace.root, 'sub'));
    await writeFile(path.join(workspace.root, 'sub', 'a.txt'), 'hi');
    await writeFile(path.join(workspace.root, 'other.txt'), 'other');
    return workspace;
  }

  beforeAll(async () => {
    // Each side works on its own copy of the same layout, and the Deno runs go in parallel.
    const [denoDenied, paddockDenied, denoGranted, paddockGranted] = await Promise.all([prepare(), prepare(), prepare(), prepare()]);
    const denied = (workspace: Workspace) => DENIED_PROBES(workspace.root);
    const [deniedByDeno, grantedByDeno] = await Promise.all([
      runDeno(denoDenied, denoScript(denied(denoDenied)), []),
      runDeno(denoGranted, denoScript(GRANTED_PROBES), GRANT_FLAGS),
    ]);
    // Paths in messages differ only by the workspace folder: compare with it replaced.
    const emptyGrant = grantFromFlags([], paddockDenied.root);
    results.denied = {
      deno: relabel(deniedByDeno, denoDenied.root),
      paddock: relabel(await runPaddock(paddockDenied, denied(paddockDenied), emptyGrant), paddockDenied.root),
    };
    results.granted = {
      deno: relabel(grantedByDeno, denoGranted.root),
      paddock: relabel(await runPaddock(paddockGranted, GRANTED_PROBES, grantFromFlags(GRANT_FLAGS, paddockGranted.root)), paddockGranted.root),
    };
  }, 30_000);

  afterAll(async () => {
    await Promise.all(workspaces.map((workspace) => workspace.cleanup()));
  });

  it('denies like Deno with no flags: the same NotCapable messages, net host:port, relative and absolute paths, env', () => {
    const { deno, paddock } = results.denied ?? { deno: {}, paddock: {} };
    expect(Object.keys(deno).length).toBe(Object.keys(DENIED_PROBES('/')).length);
    expect(paddock).toEqual(deno);
    // A few spelled out, so a failure here reads as the contract it breaks.
    expect(deno['net host:port']).toEqual({ error: ['NotCapable', 'Requires net access to "example.com:443", run again with the --allow-net flag'] });
    expect(deno['read relative']).toEqual({ error: ['NotCapable', 'Requires read access to "sub/a.txt", run again with the --allow-read flag'] });
    expect(deno['read absolute']).toEqual({ error: ['NotCapable', 'Requires read access to "<workspace>/sub/a.txt", run again with the --allow-read flag'] });
    expect(deno['write relative']).toEqual({ error: ['NotCapable', 'Requires write access to "sub/new.txt", run again with the --allow-write flag'] });
    expect(deno['env get']).toEqual({ error: ['NotCapable', 'Requires env access to "FOO", run again with the --allow-env flag'] });
    expect(deno['env toObject']).toEqual({ error: ['NotCapable', 'Requires env access, run again with the --allow-env flag'] });
  });

  it('answers like Deno under partial grants: fs errors, env values, permission states', () => {
    const { deno, paddock } = results.granted ?? { deno: {}, paddock: {} };
    expect(Object.keys(deno).length).toBe(Object.keys(GRANTED_PROBES).length);
    expect(paddock).toEqual(deno);
    expect(deno['read missing']).toEqual({ error: ['NotFound', "No such file or directory (os error 2): readfile 'sub/missing.txt'"] });
    expect(deno['env toObject partial']).toEqual({ error: ['NotCapable', 'Requires env access, run again with the --allow-env flag'] });
    expect(deno['query {"name":"net"}']).toEqual({ ok: { state: 'prompt', partial: false } });
    expect(deno['query {"name":"net","host":"example.com:443"}']).toEqual({ ok: { state: 'granted', partial: false } });
    expect(deno['query {"name":"read","path":"sub/a.txt"}']).toEqual({ ok: { state: 'granted', partial: false } });
  });
});

/** Replaces the workspace folder in every string, so two workspaces compare equal. */
function relabel(outcomes: Record<string, Outcome>, root: string): Record<string, Outcome> {
  return JSON.parse(JSON.stringify(outcomes).replaceAll(root, '<workspace>')) as Record<string, Outcome>;
}
