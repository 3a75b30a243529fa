/**
 * Hostile: capabilities used against the host. Fetches to loopback, metadata and private
 * addresses in every spelling, a name resolving to loopback, redirects from a granted server into
 * loopback; `../`, absolute, file-URL and symlink escapes with read and write grants; env names
 * that were not granted. Each denial is Deno's NotCapable with Deno's message, reaches nothing
 * (no request arrives, no file changes), is audited, and the next call works.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRETS, denials, expectFailure, expectNextCallWorks, expectNothingLeaked, expectResult, startHostile } from './harness.ts';
import type { Hostile } from './harness.ts';

let h: Hostile;
/** A loopback server a call may be granted (as the literal 127.0.0.1:PORT); it redirects on /redirect?to=URL. */
let granted: Server;
let grantedPort: number;
/** A loopback server no call is ever granted: every request it receives is an escape. */
let forbidden: Server;
let forbiddenPort: number;
let forbiddenHits = 0;
let closedPort: number;
let outside: string;
const SECRET_TEXT = 'top secret outside the workspace';

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  h = await startHostile({ workers: 1 });
  granted = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://granted');
    if (url.pathname === '/redirect') {
      response.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
      response.end();
      return;
    }
    response.end(`granted ${url.pathname}`);
  });
  grantedPort = await listen(granted);
  forbidden = createServer((request, response) => { forbiddenHits++; response.end('escaped'); });
  forbiddenPort = await listen(forbidden);
  const closing = createServer();
  closedPort = await listen(closing);
  await new Promise((resolve) => closing.close(resolve));

  outside = path.join(h.root, 'outside');
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), SECRET_TEXT);
  await writeFile(path.join(h.work, 'inside.txt'), 'inside');
  await symlink(path.join(outside, 'secret.txt'), path.join(h.work, 'link.txt'));
  await symlink(outside, path.join(h.work, 'outdir'));
});

afterAll(async () => {
  await h.close();
  granted.close();
  forbidden.close();
});

const netDenied = (target: string) => ({
  kind: 'not_capable', name: 'NotCapable', message: `Requires net access to "${target}", run again with the --allow-net flag`,
} as const);
const readDenied = (target: string) => ({
  kind: 'not_capable', name: 'NotCapable', message: `Requires read access to "${target}", run again with the --allow-read flag`,
} as const);
const writeDenied = (target: string) => ({
  kind: 'not_capable', name: 'NotCapable', message: `Requires write access to "${target}", run again with the --allow-write flag`,
} as const);
const fetchText = (url: string) => `return await (await fetch(${JSON.stringify(url)})).text();`;

describe('fetch into loopback, link-local and private space', () => {
  it('127.0.0.1 is refused under net: true (a non-public address needs its literal grant)', async () => {
    expectFailure(await h.exec(fetchText(`http://127.0.0.1:${forbiddenPort}/`), { grant: { net: true } }), netDenied(`127.0.0.1:${forbiddenPort}`));
    expect(denials(h, 'net')).toContain(`127.0.0.1:${forbiddenPort}: loopback address 127.0.0.1`);
    expect(forbiddenHits).toBe(0);
    await expectNextCallWorks(h);
  });

  it('[::1] is refused under net: true', async () => {
    expectFailure(await h.exec(fetchText(`http://[::1]:${forbiddenPort}/`), { grant: { net: true } }), netDenied(`[::1]:${forbiddenPort}`));
    expect(denials(h, 'net')).toContain(`[::1]:${forbiddenPort}: loopback address ::1`);
    await expectNextCallWorks(h);
  });

  it('the cloud metadata address 169.254.169.254 is refused under net: true', async () => {
    expectFailure(await h.exec(fetchText('http://169.254.169.254/latest/meta-data/iam/security-credentials/'), { grant: { net: true } }), netDenied('169.254.169.254:80'));
    expect(denials(h, 'net')).toContain('169.254.169.254:80: cloud metadata address 169.254.169.254');
    await expectNextCallWorks(h);
  });

  it('hex 0x7f000001, decimal 2130706433, octal 0177.0.0.1 and short 127.1 all name 127.0.0.1 and are refused', async () => {
    for (const host of ['0x7f000001', '2130706433', '0177.0.0.1', '127.1', '0x7f.0.0.1']) {
      expectFailure(await h.exec(fetchText(`http://${host}:${forbiddenPort}/`), { grant: { net: true } }), netDenied(`127.0.0.1:${forbiddenPort}`));
    }
    expect(forbiddenHits).toBe(0);
    await expectNextCallWorks(h);
  });

  it('IPv4-mapped IPv6 spellings of loopback are refused as 127.0.0.1', async () => {
    for (const host of ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[0:0:0:0:0:ffff:7f00:0001]']) {
      expectFailure(await h.exec(fetchText(`http://${host}:${forbiddenPort}/`), { grant: { net: true } }), netDenied(`127.0.0.1:${forbiddenPort}`));
    }
    expect(forbiddenHits).toBe(0);
    await expectNextCallWorks(h);
  });

  it('unspecified, private and unique-local addresses are refused', async () => {
    expectFailure(await h.exec(fetchText(`http://0.0.0.0:${forbiddenPort}/`), { grant: { net: true } }), netDenied(`0.0.0.0:${forbiddenPort}`));
    expectFailure(await h.exec(fetchText('http://10.0.0.1:8080/'), { grant: { net: true } }), netDenied('10.0.0.1:8080'));
    expectFailure(await h.exec(fetchText('http://192.168.1.1/'), { grant: { net: true } }), netDenied('192.168.1.1:80'));
    expectFailure(await h.exec(fetchText('http://[fd00::1]:8080/'), { grant: { net: true } }), netDenied('[fd00::1]:8080'));
    expectFailure(await h.exec(fetchText('http://100.64.0.1/'), { grant: { net: true } }), netDenied('100.64.0.1:80'));
    expect(forbiddenHits).toBe(0);
    await expectNextCallWorks(h);
  });

  it('a name resolving to loopback (localhost) is refused, even when the name itself is granted', async () => {
    const resolved = new RegExp(`^Requires net access to "(127\\.0\\.0\\.1|\\[::1\\]):${forbiddenPort}", run again with the --allow-net flag$`);
    for (const grant of [{ net: true }, { net: ['localhost'] }, { net: [`localhost:${forbiddenPort}`] }]) {
      for (const host of ['localhost', 'LOCALHOST', 'localhost.']) {
        expectFailure(await h.exec(fetchText(`http://${host}:${forbiddenPort}/`), { grant }), { kind: 'not_capable', name: 'NotCapable', message: resolved });
      }
    }
    expect(denials(h, 'net')).toContainEqual(expect.stringMatching(new RegExp(`^localhost:${forbiddenPort}: resolves to loopback address`)));
    expect(forbiddenHits).toBe(0);
    await expectNextCallWorks(h);
  });

  it('the literal grant of a loopback address opens exactly that address and port', async () => {
    const grant = { net: [`127.0.0.1:${grantedPort}`] };
    expectResult(await h.exec(fetchText(`http://127.0.0.1:${grantedPort}/ok`), { grant }), 'granted /ok');
    expectFailure(await h.exec(fetchText(`http://127.0.0.1:${forbiddenPort}/`), { grant }), netDenied(`127.0.0.1:${forbiddenPort}`));
    expectFailure(await h.exec(fetchText(`http://localhost:${grantedPort}/`), { grant }), netDenied(`localhost:${grantedPort}`));
    expect(forbiddenHits).toBe(0);
    await expectNextCallWorks(h);
  });

  it('a redirect from a granted server into loopback, another port, [::1] or the metadata address is checked again and refused', async () => {
    const grant = { net: [`127.0.0.1:${grantedPort}`] };
    const via = (to: string) => fetchText(`http://127.0.0.1:${grantedPort}/redirect?to=${encodeURIComponent(to)}`);
    expectFailure(await h.exec(via(`http://127.0.0.1:${forbiddenPort}/`), { grant }), netDenied(`127.0.0.1:${forbiddenPort}`));
    expectFailure(await h.exec(via(`http://localhost:${grantedPort}/`), { grant }), netDenied(`localhost:${grantedPort}`));
    expectFailure(await h.exec(via(`http://[::1]:${grantedPort}/`), { grant }), netDenied(`[::1]:${grantedPort}`));
    expectFailure(await h.exec(via(`http://2130706433:${forbiddenPort}/`), { grant }), netDenied(`127.0.0.1:${forbiddenPort}`));
    expectFailure(await h.exec(via('http://169.254.169.254/latest/meta-data/'), { grant }), netDenied('169.254.169.254:80'));
    expectFailure(await h.exec(via(`http://127.0.0.1:${forbiddenPort}/`), { grant: { net: [`127.0.0.1:${grantedPort}`, '169.254.169.254'] } }), netDenied(`127.0.0.1:${forbiddenPort}`));
    expect(forbiddenHits).toBe(0);
    await expectNextCallWorks(h);
  });

  it('a refused connection on a granted address is Deno\'s "fetch failed", with guest-only frames and no host detail', async () => {
    const outcome = await h.exec(`
      try { await fetch('http://127.0.0.1:${closedPort}/'); return 'connected'; } catch (error) {
        return [error.name, error.message, error.cause === undefined ? null : String(error.cause), error.stack.split('\\n').slice(1).every((line) => line.includes('(paddock:runtime:'))];
      }`, { grant: { net: [`127.0.0.1:${closedPort}`] } });
    expectResult(outcome, ['TypeError', 'fetch failed', null, true]);
    expectNothingLeaked(outcome, [String(closedPort)]);
    await expectNextCallWorks(h);
  });

  it('a granted response is built of guest objects only', async () => {
    const outcome = await h.exec(`
      const response = await fetch('http://127.0.0.1:${grantedPort}/objects');
      const bytes = new Uint8Array(await response.clone().arrayBuffer());
      const reach = (value) => { try { return typeof value.constructor.constructor('return process')(); } catch (error) { return error.message; } };
      return [response instanceof Response, response.headers instanceof Headers, bytes instanceof Uint8Array, reach(response), reach(response.headers), reach(bytes),
        reach(Object.getPrototypeOf(bytes.buffer)), await response.text()];`, { grant: { net: [`127.0.0.1:${grantedPort}`] } });
    expectResult(outcome, [true, true, true, 'process is not defined', 'process is not defined', 'process is not defined', 'process is not defined', 'granted /objects']);
    await expectNextCallWorks(h);
  });
});

describe('path escapes from a granted folder', () => {
  it('../ out of the granted folder is refused, and nothing of the file comes back', async () => {
    const outcome = await h.exec(`return await Deno.readTextFile('../outside/secret.txt');`, { grant: { read: ['.'] } });
    expectFailure(outcome, readDenied('../outside/secret.txt'));
    expect(JSON.stringify(outcome)).not.toContain(SECRET_TEXT);
    expect(denials(h, 'read')).toContain('../outside/secret.txt: not granted');
    expectFailure(await h.exec(`return await Deno.readTextFile('./.././work/../outside/./secret.txt');`, { grant: { read: ['.'] } }), readDenied('./.././work/../outside/./secret.txt'));
    await expectNextCallWorks(h);
  });

  it('an absolute path or a file URL outside the grant is refused', async () => {
    const secret = path.join(outside, 'secret.txt');
    expectFailure(await h.exec(`return await Deno.readTextFile(${JSON.stringify(secret)});`, { grant: { read: ['.'] } }), readDenied(secret));
    expectFailure(await h.exec(`return await Deno.readTextFile(new URL(${JSON.stringify(`file://${secret}`)}));`, { grant: { read: ['.'] } }), readDenied(secret));
    expectFailure(await h.exec(`return await Deno.readTextFile('/etc/passwd');`, { grant: { read: ['.'] } }), readDenied('/etc/passwd'));
    await expectNextCallWorks(h);
  });

  it('a symlink inside the grant pointing outside is refused (real paths are checked)', async () => {
    const outcome = await h.exec(`return await Deno.readTextFile('link.txt');`, { grant: { read: ['.'] } });
    expectFailure(outcome, readDenied('link.txt'));
    expect(JSON.stringify(outcome)).not.toContain(SECRET_TEXT);
    expectFailure(await h.exec(`return await Deno.readTextFile('outdir/secret.txt');`, { grant: { read: ['.'] } }), readDenied('outdir/secret.txt'));
    expectFailure(await h.exec(`const names = []; for await (const entry of Deno.readDir('outdir')) names.push(entry.name); return names;`, { grant: { read: ['.'] } }), readDenied('outdir'));
    expectFailure(await h.exec(`return (await Deno.stat('../outside')).isDirectory;`, { grant: { read: ['.'] } }), readDenied('../outside'));
    expectResult(await h.exec(`return await Deno.readTextFile('inside.txt');`, { grant: { read: ['.'] } }), 'inside');
    await expectNextCallWorks(h);
  });

  it('writes through ../, an outward symlink or a symlinked folder are refused and change nothing', async () => {
    const grant = { read: ['.'], write: ['.'] };
    expectFailure(await h.exec(`await Deno.writeTextFile('../outside/new.txt', 'x'); return 'wrote';`, { grant }), writeDenied('../outside/new.txt'));
    expectFailure(await h.exec(`await Deno.writeTextFile('link.txt', 'overwritten'); return 'wrote';`, { grant }), writeDenied('link.txt'));
    expectFailure(await h.exec(`await Deno.writeTextFile('outdir/planted.txt', 'x'); return 'wrote';`, { grant }), writeDenied('outdir/planted.txt'));
    expectFailure(await h.exec(`await Deno.writeTextFile('link.txt', 'appended', { append: true }); return 'wrote';`, { grant }), writeDenied('link.txt'));
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe(SECRET_TEXT);
    await expect(stat(path.join(outside, 'new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(path.join(outside, 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expectNextCallWorks(h);
  });

  it('mkdir and remove outside the grant are refused and change nothing', async () => {
    const grant = { write: ['.'] };
    expectFailure(await h.exec(`await Deno.mkdir('../outside/made', { recursive: true }); return 'made';`, { grant }), writeDenied('../outside/made'));
    expectFailure(await h.exec(`await Deno.remove('../outside/secret.txt'); return 'removed';`, { grant }), writeDenied('../outside/secret.txt'));
    expectFailure(await h.exec(`await Deno.remove('outdir/secret.txt'); return 'removed';`, { grant }), writeDenied('outdir/secret.txt'));
    expectFailure(await h.exec(`await Deno.remove('..', { recursive: true }); return 'removed';`, { grant }), writeDenied('..'));
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe(SECRET_TEXT);
    await expect(stat(path.join(outside, 'made'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expectNextCallWorks(h);
  });

  it('a NUL byte in a path is a TypeError before any host call', async () => {
    expectFailure(await h.exec(`return await Deno.readTextFile('inside.txt\\0../../outside/secret.txt');`, { grant: { read: ['.'] } }), {
      kind: 'tool_error', name: 'TypeError', message: 'file name contained an unexpected NUL byte',
    });
    await expectNextCallWorks(h);
  });

  it('an endless device file stops at the read limit', async () => {
    expectFailure(await h.exec(`return (await Deno.readFile('/dev/zero')).length;`, { grant: { read: ['/dev/zero'] }, limits: { maxFileBytes: 65_536 } }), {
      kind: 'tool_error', name: 'RangeError', message: '"/dev/zero" is larger than the read limit of 65536 bytes per file operation',
    });
    await expectNextCallWorks(h);
  });

  it('even with read: true, the worker\'s own environment holds no secret and none of the service\'s variables', async () => {
    const outcome = await h.exec(`return (await Deno.readTextFile('/proc/self/environ')).split('\\0').filter(Boolean).map((entry) => entry.split('=')[0]);`, { grant: { read: true } });
    expect(outcome.ok).toBe(true);
    const names = outcome.ok ? (outcome.result as string[]) : [];
    expect(names.filter((name) => !name.startsWith('NODE_CHANNEL_'))).toEqual([]);
    expect(JSON.stringify(outcome)).not.toContain(SECRETS['GRANTED_KEY']);
    await expectNextCallWorks(h);
  });
});

describe('env names that were not granted', () => {
  const envDenied = (name: string) => ({
    kind: 'not_capable', name: 'NotCapable', message: `Requires env access to "${name}", run again with the --allow-env flag`,
  } as const);

  it('a name outside the grant is refused, and its value never comes back', async () => {
    const grant = { env: ['GRANTED_KEY'] };
    expectResult(await h.exec(`return Deno.env.get('GRANTED_KEY');`, { grant }), 'granted-value');
    expectFailure(await h.exec(`return Deno.env.get('HIDDEN_KEY');`, { grant }), envDenied('HIDDEN_KEY'));
    expectFailure(await h.exec(`return Deno.env.has('HIDDEN_KEY');`, { grant }), envDenied('HIDDEN_KEY'));
    expectFailure(await h.exec(`return Deno.env.get('PATH');`, { grant }), envDenied('PATH'));
    expect(denials(h, 'env')).toContain('HIDDEN_KEY: not granted');
    await expectNextCallWorks(h);
  });

  it('Deno.env.toObject() under a partial grant is refused, whatever the list holds', async () => {
    const denied = { kind: 'not_capable', name: 'NotCapable', message: 'Requires env access, run again with the --allow-env flag' } as const;
    for (const env of [['GRANTED_KEY'], ['GRANTED_KEY', 'HIDDEN_KEY'], ['*'], ['GRANTED_*']]) {
      expectFailure(await h.exec(`return Deno.env.toObject();`, { grant: { env } }), denied);
    }
    await expectNextCallWorks(h);
  });

  it('a prefix grant covers only its prefix', async () => {
    const grant = { env: ['GRANTED_*'] };
    expectResult(await h.exec(`return Deno.env.get('GRANTED_KEY');`, { grant }), 'granted-value');
    expectFailure(await h.exec(`return Deno.env.get('HIDDEN_KEY');`, { grant }), envDenied('HIDDEN_KEY'));
    await expectNextCallWorks(h);
  });

  it('env: true reads the configured secrets only, never the service\'s process environment', async () => {
    const outcome = await h.exec(`return { all: Deno.env.toObject(), path: Deno.env.get('PATH') ?? null, home: Deno.env.get('HOME') ?? null, node: Deno.env.get('NODE_OPTIONS') ?? null };`, {
      grant: { env: true }, secrets: { ONLY: 'configured' },
    });
    expectResult(outcome, { all: { ONLY: 'configured' }, path: null, home: null, node: null });
    await expectNextCallWorks(h);
  });
});
