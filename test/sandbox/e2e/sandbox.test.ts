/**
 * Pins, end to end through worker processes, the real guest runtime and the capability host
 * functions: a tool gets exactly its grant (net, read, env), denials are Deno's NotCapable with
 * Deno's message and are audited, and code_exec snippets run with no grant unless given one.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../../sandbox/audit.ts';
import { bundleToolModule } from '../../../sandbox/bundler/tool-bundle.ts';
import { normalizeGrant } from '../../../sandbox/grants/grant.ts';
import { DEFAULT_LIMITS } from '../../../sandbox/limits.ts';
import { startSandbox } from '../../../sandbox/sandbox.ts';
import type { Sandbox } from '../../../sandbox/sandbox.ts';
import type { WireGrant } from '../../../sandbox/worker/messages.ts';

let sandbox: Sandbox;
let server: Server;
let port: number;
let folder: string;
const audit: AuditRecord[] = [];
const identity = { callId: 'call-1', tool: 'probe', caller: 'test' };

async function tool(name: string, source: string) {
  await writeFile(path.join(folder, `${name}.ts`), source);
  return bundleToolModule(path.join(folder, `${name}.ts`), folder);
}

const grantOf = (input: Record<string, unknown>): WireGrant => normalizeGrant(input, { cwd: folder }) as unknown as WireGrant;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'paddock-e2e-'));
  await writeFile(path.join(folder, 'notes.txt'), 'hello from disk');
  server = createServer((request, response) => { response.end(`served ${request.url ?? ''}`); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  sandbox = await startSandbox({ limits: DEFAULT_LIMITS, audit: { record: (record) => audit.push(record) }, workers: 1 });
});

afterAll(async () => {
  await sandbox.close();
  server.close();
  await rm(folder, { recursive: true, force: true });
});

describe('sandbox end to end', () => {
  it('fetches a granted loopback address and is refused elsewhere', async () => {
    const bundle = await tool('fetcher', 'export default async (p: { url: string }) => (await fetch(p.url)).text();');
    const granted = await sandbox.runTool({ identity, bundle, params: { url: `http://127.0.0.1:${port}/x` }, grant: grantOf({ net: [`127.0.0.1:${port}`] }), cwd: folder, secrets: {} });
    expect(granted).toMatchObject({ ok: true, content: 'served /x' });

    const denied = await sandbox.runTool({ identity, bundle, params: { url: `http://127.0.0.1:${port}/x` }, grant: grantOf({ net: ['example.com'] }), cwd: folder, secrets: {} });
    expect(denied).toMatchObject({
      ok: false,
      error: { kind: 'not_capable', name: 'NotCapable', message: `Requires net access to "127.0.0.1:${port}", run again with the --allow-net flag` },
    });
    expect(audit).toContainEqual(expect.objectContaining({ capability: 'net', target: `127.0.0.1:${port}`, allowed: false }));
  });

  it('reads a granted file; a read outside the grant is NotCapable', async () => {
    const bundle = await tool('reader', 'export default async (p: { path: string }) => await Deno.readTextFile(p.path);');
    const granted = await sandbox.runTool({ identity, bundle, params: { path: 'notes.txt' }, grant: grantOf({ read: [folder] }), cwd: folder, secrets: {} });
    expect(granted).toMatchObject({ ok: true, content: 'hello from disk' });
    const denied = await sandbox.runTool({ identity, bundle, params: { path: '/etc/hostname' }, grant: grantOf({ read: [folder] }), cwd: folder, secrets: {} });
    expect(denied).toMatchObject({ ok: false, error: { kind: 'not_capable', message: 'Requires read access to "/etc/hostname", run again with the --allow-read flag' } });
  });

  it('reads env values from the configured secrets only, and only granted names', async () => {
    const bundle = await tool('env', 'export default () => JSON.stringify([Deno.env.get("API_KEY") ?? null, (() => { try { return Deno.env.get("OTHER"); } catch (e) { return (e as Error).name; } })()]);');
    const outcome = await sandbox.runTool({ identity, bundle, params: {}, grant: grantOf({ env: ['API_KEY'] }), cwd: folder, secrets: { API_KEY: 'k-123', OTHER: 'hidden' } });
    expect(outcome).toMatchObject({ ok: true, content: '["k-123","NotCapable"]' });
  });

  it('describes a module without running execute', async () => {
    const bundle = await tool('described', [
      'export const name = "described";',
      'export const description = "Says hi.";',
      'export const parameters = { type: "object", properties: {} };',
      'export const permissions = { net: ["example.com"] };',
      'export default () => { throw new Error("must not run"); };',
    ].join('\n'));
    expect(await sandbox.describe(bundle, identity)).toEqual({
      ok: true,
      declarations: { name: 'described', description: 'Says hi.', parameters: { type: 'object', properties: {} }, permissions: { net: ['example.com'] }, hasExecute: true },
    });
  });

  it('runs a code_exec snippet with its logs and no ambient authority', async () => {
    const outcome = await sandbox.exec({
      identity, code: 'console.log("working", { n: 1 });\nlet denied = "";\ntry { await fetch("http://example.com/"); } catch (e) { denied = (e as Error).name; }\nreturn { sum: 1 + 2, denied, process: typeof process };',
      language: 'ts', grant: grantOf({}), cwd: folder, secrets: { SECRET: 'x' },
    });
    expect(outcome).toMatchObject({ ok: true, result: { sum: 3, denied: 'NotCapable', process: 'undefined' }, logs: [{ level: 'info', text: 'working { n: 1 }' }] });
  });
});

describe('memory outside the heap limit', () => {
  it('offers no WebAssembly, whose memories escape the heap limit', async () => {
    const outcome = await sandbox.exec({ identity, code: 'return [typeof WebAssembly, typeof globalThis.WebAssembly];', language: 'js', grant: grantOf({}), cwd: folder, secrets: {} });
    expect(outcome).toMatchObject({ ok: true, result: ['undefined', 'undefined'] });
  });

  it('counts ArrayBuffers and SharedArrayBuffers against the heap limit', async () => {
    for (const kind of ['ArrayBuffer', 'SharedArrayBuffer']) {
      const outcome = await sandbox.exec({
        identity, code: `const kept = []; for (let i = 0; i < 40; i++) kept.push(new ${kind}(32 * 1024 * 1024)); return kept.length;`,
        language: 'js', grant: grantOf({}), cwd: folder, secrets: {}, limits: { heapMiB: 64 },
      });
      expect(outcome.ok, kind).toBe(false);
    }
  });
});
