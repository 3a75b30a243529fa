/**
 * Pins the management built-ins on a real ToolSystem (real sandbox worker, temp folders): each
 * one's granted path and its refusal, as the result a model reads. write_tool puts a widened
 * permission first; test_tool passes and fails for every expectation type and checks patterns off
 * the service's thread; code_exec has no grant; tool_manual serves the file, else a generated one.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../runtime/auth/keys.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import { InvalidParamsError } from '../../runtime/coordinator/coordinator.ts';
import { startToolSystem } from '../../runtime/coordinator/tool-system.ts';
import type { ToolSystem } from '../../runtime/coordinator/tool-system.ts';
import { createLogger } from '../../runtime/observability/logger.ts';
import { builtinTools } from '../../runtime/tools/builtins/index.ts';
import type { InvokeResult } from '../../runtime/tools/contract.ts';

let base: string;
let tools: string;
let manuals: string;
let system: ToolSystem;
const admin: Caller = { name: 'ci', scopes: ['admin'], policy: 'default' };
const client: Caller = { name: 'client', scopes: ['invoke'], policy: 'default' };

const toolSource = (name: string, body: string, permissions = '{}', parameters = '{ type: "object", properties: { n: { type: "number" } }, additionalProperties: false }') => [
  `export const name = ${JSON.stringify(name)};`,
  `export const description = "Test tool ${name}. It does a thing.";`,
  `export const parameters = ${parameters};`,
  `export const permissions = ${permissions};`,
  `export default async function execute(params: { n?: number }) { ${body} }`,
].join('\n');

function call(tool: string, params: unknown, caller: Caller = admin): Promise<InvokeResult> {
  return system.coordinator.invoke(tool, { caller, params });
}

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'paddock-builtins-'));
  tools = path.join(base, 'tools');
  manuals = path.join(base, 'manuals');
  await mkdir(tools);
  await mkdir(manuals);
  await writeFile(path.join(tools, 'double.ts'), toolSource('double', 'return String((params.n ?? 0) * 2);'));
  await writeFile(path.join(tools, 'json_tool.ts'), toolSource('json_tool', 'return JSON.stringify({ a: 1, list: [1, 2], name: "paddock" });'));
  await writeFile(path.join(tools, 'greet.ts'), toolSource('greet', 'return "Hello, World!\\nSecond line";'));
  await writeFile(path.join(tools, 'failing.ts'), toolSource('failing', 'return { content: "the thing is broken", isError: true };'));
  await writeFile(path.join(tools, 'long_text.ts'), toolSource('long_text', 'return "a".repeat(30) + "b";'));
  await writeFile(path.join(manuals, 'double.md'), '# double\n\nA hand-written manual.\n');
  const config = loadConfig({ env: { PADDOCK_DATA: path.join(base, 'data'), PADDOCK_TOOLS: tools }, cwd: base });
  config.manualsDir = manuals;
  config.sandbox.workers = 1;
  // No watcher: reload_tools must be the one to notice files written behind the registry's back.
  system = await startToolSystem({ config, log: createLogger('silent'), env: {}, builtins: builtinTools(), watch: false });
});

afterAll(async () => {
  await system.close();
  await rm(base, { recursive: true, force: true });
});

describe('builtinTools', () => {
  it('registers the management built-ins with a kind, a mode and an object schema each', () => {
    const builtins = system.registry.describeAll().filter((tool) => tool.source === 'builtin');
    expect(builtins.map((tool) => [tool.name, tool.kind, tool.mode])).toEqual([
      ['code_exec', 'execute', 'sequential'],
      ['delete_tool', 'write', 'sequential'],
      ['list_tools', 'read', 'parallel'],
      ['reload_tools', 'execute', 'sequential'],
      ['test_tool', 'execute', 'sequential'],
      ['tool_manual', 'read', 'parallel'],
      ['write_tool', 'write', 'sequential'],
    ]);
    for (const tool of builtins) {
      expect(tool.parameters).toMatchObject({ type: 'object', additionalProperties: false });
      expect(tool.description.length, tool.name).toBeGreaterThan(80);
    }
  });
});

describe('reload_tools', () => {
  it('reports added, updated, removed and each broken file with its reason', async () => {
    await writeFile(path.join(tools, 'added.ts'), toolSource('added', 'return "added";'));
    await writeFile(path.join(tools, 'broken.ts'), 'export const name = "broken";\nexport default function (: {}\n');
    const first = await call('reload_tools', {});
    expect(first.ok).toBe(true);
    expect(first.content).toMatch(/^Reloaded the tools folder in \d+ ms: 1 added, 0 updated, 0 removed, 5 unchanged\.\nAdded: added\n/);
    expect(first.content).toMatch(/1 file failed to load .*\n- broken\.ts:2:\d+: /);
    expect(first.metadata).toMatchObject({ added: ['added'], updated: [], removed: [], errors: [{ file: 'broken.ts' }] });
    expect(await call('added', {})).toMatchObject({ ok: true, content: 'added' });

    await writeFile(path.join(tools, 'added.ts'), toolSource('added', 'return "changed";'));
    await rm(path.join(tools, 'broken.ts'));
    const second = await call('reload_tools', {});
    expect(second.content).toMatch(/: 0 added, 1 updated, 0 removed, 5 unchanged\.\nUpdated: added$/);
    await rm(path.join(tools, 'added.ts'));
    expect((await call('reload_tools', {})).content).toContain('Removed: added');
    expect((await call('reload_tools', {})).content).toMatch(/nothing changed \(5 user tools unchanged\)\.$/);
  });

  it('refuses a caller without the admin scope', async () => {
    const refused = await call('reload_tools', {}, client);
    expect(refused).toMatchObject({ ok: false, error: { kind: 'tool_error' } });
    expect(refused.content).toContain('needs an API key with the "admin" scope; the key "client" has invoke');
  });
});

describe('write_tool', () => {
  it('creates a tool that answers at once, and makes a widened permission impossible to miss', async () => {
    const created = await call('write_tool', { name: 'wt', source: toolSource('wt', 'return "one";') });
    expect(created.ok).toBe(true);
    expect(created.content).toMatch(/^Created tools\/wt\.ts: "wt" \(kind read\) is live and answers calls now\.\nDeclared permissions: none/);
    expect(await call('wt', {})).toMatchObject({ ok: true, content: 'one' });

    const widened = await call('write_tool', { name: 'wt', source: toolSource('wt', 'return "two";', '{ net: ["api.example.com"], env: ["WT_KEY"] }') });
    expect(widened.content).toContain('Replaced tools/wt.ts: "wt" (kind web)');
    expect(widened.content.split('\n')[1]).toBe('PERMISSIONS WIDENED: this version declares more than the previous one: + net: api.example.com; env: WT_KEY.');
    expect(widened.metadata).toMatchObject({ created: false, widened: true, addedPermissions: { net: ['api.example.com'], env: ['WT_KEY'] }, removedPermissions: {} });
    expect(await call('wt', {})).toMatchObject({ content: 'two' });

    const narrowed = await call('write_tool', { name: 'wt', source: toolSource('wt', 'return "three";', '{ env: ["WT_KEY"] }') });
    expect(narrowed.content).not.toContain('WIDENED');
    expect(narrowed.content).toContain('Permissions dropped since the previous version: - net: api.example.com.');
    expect(narrowed.content).toContain('Declared permissions now: env: WT_KEY.');
    expect(narrowed.metadata).toMatchObject({ widened: false });
  });

  it('states the permissions a new tool requests', async () => {
    const created = await call('write_tool', { name: 'wt_net', source: toolSource('wt_net', 'return "x";', '{ net: ["api.example.com"] }') });
    expect(created.content.split('\n')[1]).toBe('PERMISSIONS REQUESTED by this new tool: net: api.example.com.');
    expect(created.metadata).toMatchObject({ created: true, widened: true, kind: 'web' });
  });

  it('writes nothing for a source that fails its checks, and the previous version keeps serving', async () => {
    const refused = await call('write_tool', { name: 'double', source: 'export const name = "double";\nexport default () => "x";\n' });
    expect(refused.ok).toBe(false);
    expect(refused.content).toMatch(/^write_tool refused "double": nothing was written and the previous version keeps serving\.\nProblems:\n- /);
    expect(refused.content).toContain('export const description: missing or empty');
    expect(refused.content).toContain('call write_tool again with the whole corrected source');
    const onDisk = await readFile(path.join(tools, 'double.ts'), 'utf8');
    expect(onDisk).toContain('params.n ?? 0');
    expect(await call('double', { n: 4 })).toMatchObject({ content: '8' });

    const syntax = await call('write_tool', { name: 'bad_syntax', source: 'export const name = "bad_syntax";\nexport default function (: {}\n' });
    expect(syntax.content).toMatch(/- bad_syntax\.ts:2:\d+: /);
    expect(existsSync(path.join(tools, 'bad_syntax.ts'))).toBe(false);
  });

  it('cannot shadow a built-in nor write outside the tools folder', async () => {
    const shadow = await call('write_tool', { name: 'list_tools', source: toolSource('list_tools', 'return "x";') });
    expect(shadow.ok).toBe(false);
    expect(shadow.content).toContain('"list_tools" is a built-in tool; choose another name');
    expect(shadow.content).toContain('Choose a name that no built-in tool uses');
    expect(system.registry.isBuiltin('list_tools')).toBe(true);

    await expect(call('write_tool', { name: '../escape', source: toolSource('escape', 'return "x";') })).rejects.toBeInstanceOf(InvalidParamsError);
    expect(existsSync(path.join(base, 'escape.ts'))).toBe(false);
    const mismatch = await call('write_tool', { name: 'other_name', source: toolSource('wt', 'return "x";') });
    expect(mismatch.content).toContain('the source declares "wt", but it is being written as "other_name"');
  });

  it('refuses a caller without the admin scope', async () => {
    const refused = await call('write_tool', { name: 'sneaky', source: toolSource('sneaky', 'return "x";') }, client);
    expect(refused.content).toContain('write_tool manages the tool registry and needs an API key with the "admin" scope');
    expect(system.registry.lookup('sneaky')).toBeUndefined();
  });
});

describe('delete_tool', () => {
  it('deletes a user tool and its file', async () => {
    await call('write_tool', { name: 'doomed', source: toolSource('doomed', 'return "x";') });
    expect(existsSync(path.join(tools, 'doomed.ts'))).toBe(true);
    const deleted = await call('delete_tool', { name: 'doomed' });
    expect(deleted).toMatchObject({ ok: true, metadata: { name: 'doomed', deleted: true } });
    expect(deleted.content).toContain('Deleted the user tool "doomed"');
    expect(existsSync(path.join(tools, 'doomed.ts'))).toBe(false);
    expect(system.registry.lookup('doomed')).toBeUndefined();
  });

  it('refuses built-ins, unknown tools and callers without the admin scope', async () => {
    const builtin = await call('delete_tool', { name: 'write_tool' });
    expect(builtin).toMatchObject({ ok: false, content: '"write_tool" is a built-in tool; built-ins cannot be deleted. Nothing was changed.' });
    const unknown = await call('delete_tool', { name: 'nope' });
    expect(unknown.content).toMatch(/^There is no tool named "nope", so nothing was deleted\. User tools: double, failing, greet, json_tool, long_text/);
    const refused = await call('delete_tool', { name: 'double' }, client);
    expect(refused.content).toContain('needs an API key with the "admin" scope');
    expect(system.registry.lookup('double')).toBeDefined();
  });
});

describe('list_tools', () => {
  it('lists every live tool in one compact line each, with user tools\' permissions', async () => {
    await call('write_tool', { name: 'netter', source: toolSource('netter', 'return "x";', '{ net: ["api.example.com"] }') });
    const listed = await call('list_tools', {});
    expect(listed.ok).toBe(true);
    const lines = listed.content.split('\n');
    expect(lines[0]).toMatch(/^\d+ tools: 7 built-in, \d+ user\.$/);
    expect(lines).toContain('- write_tool [write]: Create or replace a user tool: writes tools/<name>.ts from the full module source and loads it, so the tool answers calls right away.');
    expect(lines).toContain('- netter [web] {net: api.example.com}: Test tool netter.');
    expect(lines).toContain('- double [read] {none}: Test tool double.');
    const metadata = listed.metadata as { tools: { name: string; source: string; permissions: unknown }[] };
    expect(metadata.tools.find((tool) => tool.name === 'netter')).toMatchObject({ source: 'user', permissions: { net: ['api.example.com'] } });
  });

  it('names the files that failed to load, with their first error line', async () => {
    await writeFile(path.join(tools, 'halfdone.ts'), 'export const name = "halfdone";\nexport default function (: {}\n');
    await call('reload_tools', {});
    const listed = await call('list_tools', {});
    expect(listed.content).toContain('Files that failed to load (fix and save, or rewrite with write_tool):');
    expect(listed.content).toMatch(/^- halfdone\.ts: halfdone\.ts:2:\d+: /m);
    await rm(path.join(tools, 'halfdone.ts'));
    await call('reload_tools', {});
    expect((await call('list_tools', {})).content).not.toContain('halfdone');
  });

  it('filters by source', async () => {
    const users = await call('list_tools', { source: 'user' });
    expect(users.content).toMatch(/^\d+ tools: 0 built-in, \d+ user\./);
    expect(users.content).not.toContain('write_tool');
  });
});

describe('tool_manual', () => {
  it('returns manuals/<name>.md when there is one', async () => {
    expect(await call('tool_manual', { name: 'double' })).toMatchObject({ ok: true, content: '# double\n\nA hand-written manual.\n' });
  });

  it('generates one from the schema otherwise', async () => {
    const generated = await call('tool_manual', { name: 'json_tool' });
    expect(generated.ok).toBe(true);
    expect(generated.content).toContain('# json_tool\n\nTest tool json_tool. It does a thing.');
    expect(generated.content).toContain('- `n` (number):');
  });

  it('names the available tools for an unknown name', async () => {
    const unknown = await call('tool_manual', { name: 'nope' });
    expect(unknown.ok).toBe(false);
    expect(unknown.content).toMatch(/^There is no tool named "nope"\. Available tools: code_exec, delete_tool, /);
  });
});

describe('test_tool', () => {
  const test = (name: string, expectation: Record<string, unknown>, params: Record<string, unknown> = {}) => call('test_tool', { name, params, expect: expectation });

  it('equals: passes on the exact text, fails with where it differs', async () => {
    const pass = await test('double', { equals: '8' }, { n: 4 });
    expect(pass).toMatchObject({ ok: true, metadata: { passed: true } });
    expect(pass.content).toBe('PASS: double({"n":4}) met the expectation.\n- equals passed: the output equals the expected text\n\n' + `Output (1 character, ${String(pass.metadata?.['durationMs'])} ms):\n8`);
    const fail = await test('greet', { equals: 'Hello, World!\nSecond lime' });
    expect(fail).toMatchObject({ ok: false, metadata: { passed: false } });
    expect(fail.content).toContain('FAIL: greet({}): 1 of 1 expectation failed.');
    expect(fail.content).toContain('- equals FAILED: the output differs at character 24 (line 2, column 10): expected "me", got "ne"');
    expect(fail.content).toContain('Output (25 characters, ');
    const whitespace = await test('double', { equals: '8\n' }, { n: 4 });
    expect(whitespace.content).toContain('differs from the expected text only in leading or trailing whitespace');
  });

  it('equals: compares a JSON value with the output parsed as JSON', async () => {
    expect(await test('json_tool', { equals: { list: [1, 2], a: 1, name: 'paddock' } })).toMatchObject({ ok: true });
    expect(await test('double', { equals: 8 }, { n: 4 })).toMatchObject({ ok: true });
    const fail = await test('json_tool', { equals: { a: 1, list: [1, 3], name: 'paddock' } });
    expect(fail.content).toContain('- equals FAILED: the output, parsed as JSON, differs from the expected value: at /list/1 expected "3", got "2"');
    const notJson = await test('greet', { equals: { a: 1 } });
    expect(notJson.content).toContain('the output is not JSON, so it cannot equal the JSON value "{\\"a\\":1}"');
  });

  it('contains: passes and fails, with a hint about case', async () => {
    expect(await test('greet', { contains: 'World' })).toMatchObject({ ok: true });
    const fail = await test('greet', { contains: 'world!' });
    expect(fail.content).toContain('- contains FAILED: the output does not contain "world!" (it does contain it when case is ignored)');
  });

  it('regex: passes and fails, with flags in /pattern/flags form, and refuses an invalid pattern', async () => {
    const pass = await test('greet', { regex: '/^second line$/im' });
    expect(pass.content).toContain('- regex passed: the output matches /^second line$/im (at character 15: "Second line")');
    const fail = await test('greet', { regex: '^\\d+$' });
    expect(fail.content).toContain('- regex FAILED: the output does not match /^\\d+$/');
    const invalid = await test('greet', { regex: '(' });
    expect(invalid.ok).toBe(false);
    expect(invalid.content).toMatch(/^test_tool ran greet\(\{\}\), but the expectation cannot be used:\n- expect\.regex: "\(" is not a valid regular expression: /);
  });

  it('jsonSchema: passes and fails with every violation, and refuses an invalid schema', async () => {
    const schema = { type: 'object', required: ['a', 'list'], properties: { a: { type: 'integer' }, list: { type: 'array', items: { type: 'number' } } } };
    expect(await test('json_tool', { jsonSchema: schema })).toMatchObject({ ok: true, metadata: { passed: true } });
    const fail = await test('json_tool', { jsonSchema: { type: 'object', required: ['missing'], properties: { a: { type: 'string' } } } });
    expect(fail.content).toContain("- jsonSchema FAILED: the output, parsed as JSON, does not match the schema: / must have required property 'missing'; /a must be string");
    const text = await test('greet', { jsonSchema: { type: 'string', pattern: '^Hello' } });
    expect(text.content).toContain('the output (not JSON, so checked as a string) matches the schema');
    const invalid = await test('json_tool', { jsonSchema: { type: 'nonsense' } });
    expect(invalid.content).toContain('- expect.jsonSchema: the JSON Schema cannot be used: ');
  });

  it('requires every expectation given to hold', async () => {
    const mixed = await test('greet', { contains: 'Hello', regex: 'Goodbye' });
    expect(mixed.content).toMatch(/^FAIL: greet\(\{\}\): 1 of 2 expectations failed\.\n- contains passed: .*\n- regex FAILED: /);
  });

  it('stops a catastrophically backtracking pattern without blocking the service', async () => {
    const started = performance.now();
    const slow = test('long_text', { regex: '^(a+)+$' });
    // The service keeps answering while the pattern runs in its own thread.
    const listed = await call('list_tools', {});
    expect(listed.ok).toBe(true);
    expect(performance.now() - started).toBeLessThan(1500);
    const outcome = await slow;
    expect(outcome.ok).toBe(false);
    expect(outcome.content).toContain('could not check its output: checking the output took longer than 3000 ms and was stopped');
  });

  it('fails without checking when the call itself fails, and reports a call that cannot start', async () => {
    const failed = await test('failing', { contains: 'x' });
    expect(failed.content).toMatch(/^FAIL: failing\(\{\}\) did not complete: tool_error: the thing is broken\nThe expectations were not checked\./);
    const unknown = await test('nope', { contains: 'x' });
    expect(unknown.content).toMatch(/^test_tool could not run nope\(\{\}\): There is no tool named "nope"\./);
    const badParams = await test('double', { contains: 'x' }, { n: 'four' });
    expect(badParams.content).toContain('Invalid parameters for "double": /n must be number');
    expect((await test('test_tool', { contains: 'x' })).content).toBe('test_tool cannot run itself; name the tool you want to test.');
  });

  it('truncates a long output around the middle', async () => {
    await call('write_tool', { name: 'verbose', source: toolSource('verbose', 'return "start-" + "x".repeat(10000) + "-end";') });
    const outcome = await test('verbose', { contains: 'start-' });
    expect(outcome.content).toContain('Output (10010 characters, ');
    expect(outcome.content).toMatch(/start-x+\n… \[8010 characters omitted\] …\nx+-end$/);
  });
});

describe('code_exec', () => {
  it('returns the snippet\'s value and its console output', async () => {
    const outcome = await call('code_exec', { code: 'console.log("working"); console.error("careful"); const xs: number[] = [3, 1, 2]; return { sorted: xs.sort() };' });
    expect(outcome).toMatchObject({ ok: true, metadata: { ok: true, result: { sorted: [1, 2, 3] }, logs: [{ level: 'info', text: 'working' }, { level: 'error', text: 'careful' }] } });
    expect(outcome.content).toBe('{\n  "sorted": [\n    1,\n    2,\n    3\n  ]\n}\n\nConsole output:\nworking\n[error] careful');
    expect(await call('code_exec', { code: 'return 6 * 7', language: 'js' })).toMatchObject({ ok: true, content: '42' });
    expect((await call('code_exec', { code: 'const x = 1;' })).content).toBe('(no return value; use `return` to give one)');
  });

  it('has no grant: the network is refused with Deno\'s message and a hint', async () => {
    const denied = await call('code_exec', { code: 'const r = await fetch("https://example.com/"); return r.status;' }, client);
    expect(denied.ok).toBe(false);
    expect(denied.content).toMatch(/^Error \(not_capable\): NotCapable: Requires net access to "example\.com:443", run again with the --allow-net flag\n/);
    expect(denied.content).toContain('code_exec runs without grants');
  });

  it('reports a syntax error with its position', async () => {
    const broken = await call('code_exec', { code: 'return (1 +;' });
    expect(broken.ok).toBe(false);
    expect(broken.content).toMatch(/^Error \(compile_error\): SyntaxError: .*1:\d+/);
    expect(broken.content).toContain('the code is the body of an async function');
  });
});
