/**
 * Pins the tool system behind every entry point: user tools load from the folder (a broken file
 * never stops the others and keeps its last good version), params are validated before execute,
 * grants are declared ∩ policy ∩ request, and a reload swaps versions atomically while an
 * in-flight call finishes on the version it started with.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../runtime/config/load.ts';
import { InvalidParamsError, ToolNotFoundError } from '../../runtime/coordinator/coordinator.ts';
import { startToolSystem } from '../../runtime/coordinator/tool-system.ts';
import type { ToolSystem } from '../../runtime/coordinator/tool-system.ts';
import { createLogger } from '../../runtime/observability/logger.ts';
import type { BuiltinTool } from '../../runtime/tools/contract.ts';

let base: string;
let tools: string;
let system: ToolSystem;
const caller = { name: 'ci', scopes: ['admin'] as const, policy: 'default' };
const webCaller = { name: 'web', scopes: ['invoke'] as const, policy: 'web' };

const echoBuiltin: BuiltinTool = {
  name: 'echo_builtin', description: 'Echoes.', kind: 'read', mode: 'parallel',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (params) => Promise.resolve((params as { text: string }).text),
};

const toolSource = (name: string, body: string, permissions = '{}') => [
  `export const name = ${JSON.stringify(name)};`,
  `export const description = "Test tool ${name}.";`,
  'export const parameters = { type: "object", properties: { n: { type: "number" } }, required: ["n"], additionalProperties: false };',
  `export const permissions = ${permissions};`,
  `export default async function execute(params: { n: number }, ctx: { update(t: string): void }) { ${body} }`,
].join('\n');

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'paddock-tools-'));
  tools = path.join(base, 'tools');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(tools);
  await writeFile(path.join(tools, 'double.ts'), toolSource('double', 'return String(params.n * 2);'));
  await writeFile(path.join(tools, 'broken.ts'), 'export const name = "broken";\nexport default function (: {}\n');
  await writeFile(path.join(tools, 'noschema.ts'), 'export const name = "noschema";\nexport default () => "x";\n');
  await writeFile(path.join(tools, '_template.ts'), toolSource('template', 'return "never loaded";'));
  await writeFile(path.join(tools, 'shadow.ts'), toolSource('echo_builtin', 'return "shadow";'));
  await writeFile(path.join(tools, 'fetcher.ts'), toolSource('fetcher', 'try { await fetch("http://127.0.0.1:8999/"); return "fetched"; } catch (e) { return (e as Error).name + ": " + (e as Error).message; }', '{ net: ["127.0.0.1", "example.com"] }'));
  const config = loadConfig({ env: { PADDOCK_DATA: path.join(base, 'data'), PADDOCK_TOOLS: tools }, cwd: base });
  config.policies['web'] = { net: ['example.com'] };
  system = await startToolSystem({ config, log: createLogger('silent'), env: {}, builtins: [echoBuiltin] });
});

afterAll(async () => {
  await system.close();
  await rm(base, { recursive: true, force: true });
});

describe('loading', () => {
  it('loads good files, skips _ files, and reports each broken one with its reason', () => {
    const names = system.registry.describeAll().map((tool) => tool.name);
    expect(names).toEqual(['echo_builtin', 'double', 'fetcher']);
    const errors = Object.fromEntries(system.registry.errors().map((error) => [error.file, error.message]));
    expect(errors['broken.ts']).toMatch(/^broken\.ts:2:\d+: /);
    expect(errors['noschema.ts']).toContain('export const description: missing or empty');
    expect(errors['shadow.ts']).toContain('is the name of a built-in tool');
  });

  it('derives kind and mode from what a tool may touch', () => {
    const fetcher = system.registry.describeAll().find((tool) => tool.name === 'fetcher');
    expect(fetcher).toMatchObject({ kind: 'web', mode: 'parallel', source: 'user', permissions: { net: ['127.0.0.1', 'example.com'] } });
  });
});

describe('invoke', () => {
  it('runs a user tool and a built-in through the same path', async () => {
    expect(await system.coordinator.invoke('double', { caller, params: { n: 21 } })).toMatchObject({ ok: true, content: '42', tool: 'double' });
    expect(await system.coordinator.invoke('echo_builtin', { caller, params: { text: 'hi' } })).toMatchObject({ ok: true, content: 'hi' });
  });

  it('refuses unknown tools and invalid params before anything runs, naming every violation', async () => {
    await expect(system.coordinator.invoke('nope', { caller, params: {} })).rejects.toBeInstanceOf(ToolNotFoundError);
    const attempt = system.coordinator.invoke('double', { caller, params: { n: 'x', extra: 1 } });
    await expect(attempt).rejects.toBeInstanceOf(InvalidParamsError);
    const error = (await attempt.then(() => undefined, (caught: unknown) => caught)) as InvalidParamsError;
    expect([...error.violations].sort((a, b) => a.pointer.localeCompare(b.pointer))).toEqual([
      { pointer: '/extra', message: 'is not an allowed property' },
      { pointer: '/n', message: 'must be number' },
    ]);
  });

  it('grants the intersection of the declaration and the caller policy', async () => {
    // default policy grants nothing: the declared 127.0.0.1 is not granted
    const denied = await system.coordinator.invoke('fetcher', { caller, params: { n: 1 } });
    expect(denied).toMatchObject({ ok: true, content: 'NotCapable: Requires net access to "127.0.0.1:8999", run again with the --allow-net flag' });
    const stillDenied = await system.coordinator.invoke('fetcher', { caller: webCaller, params: { n: 1 } });
    expect(stillDenied.content).toContain('NotCapable');
  });
});

describe('hot reload', () => {
  it('picks up an edited file, and an in-flight call finishes on the old bundle', async () => {
    await writeFile(path.join(tools, 'slow.ts'), toolSource('slow', 'await new Promise((r) => setTimeout(r, 300)); return "old";'));
    await vi.waitFor(() => { expect(system.registry.lookup('slow')).toBeDefined(); }, { timeout: 5000, interval: 10 });
    const inFlight = system.coordinator.invoke('slow', { caller, params: { n: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await writeFile(path.join(tools, 'slow.ts'), toolSource('slow', 'return "new";'));
    await vi.waitFor(async () => {
      expect(await system.coordinator.invoke('slow', { caller, params: { n: 1 } })).toMatchObject({ content: 'new' });
    }, { timeout: 5000, interval: 20 });
    expect(await inFlight).toMatchObject({ ok: true, content: 'old' });
  });

  it('keeps the last good version serving when an edit breaks the file', async () => {
    await writeFile(path.join(tools, 'double.ts'), 'export const name = "double";\nthis is not code\n');
    await vi.waitFor(() => { expect(system.registry.errors().map((error) => error.file)).toContain('double.ts'); }, { timeout: 5000, interval: 10 });
    expect(await system.coordinator.invoke('double', { caller, params: { n: 2 } })).toMatchObject({ ok: true, content: '4' });
  });

  it('writes a tool through writeTool (checked first) and reports widened permissions', async () => {
    await expect(system.loader.writeTool('wt', 'export const name = "wt"; export default () => "x";')).rejects.toThrow(/description: missing/);
    expect(system.registry.lookup('wt')).toBeUndefined();
    const first = await system.loader.writeTool('wt', toolSource('wt', 'return "one";'));
    expect(first).toMatchObject({ name: 'wt', created: true, addedPermissions: {} });
    expect(await system.coordinator.invoke('wt', { caller, params: { n: 1 } })).toMatchObject({ content: 'one' });
    const second = await system.loader.writeTool('wt', toolSource('wt', 'return "two";', '{ net: ["api.example.com"] }'));
    expect(second).toMatchObject({ created: false, addedPermissions: { net: ['api.example.com'] } });
    await expect(system.loader.writeTool('echo_builtin', toolSource('echo_builtin', 'return "x";'))).rejects.toThrow(/built-in/);
    expect(await system.loader.deleteTool('wt')).toBe(true);
    expect(system.registry.lookup('wt')).toBeUndefined();
  });
});
