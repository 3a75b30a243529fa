/**
 * Pins the manuals: every built-in has manuals/<name>.md, served by tool_manual, naming each of its
 * parameters; and the complete example in write_tool.md, written through write_tool, loads and
 * gives exactly the output the manual promises.
 */
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../runtime/auth/keys.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import { startToolSystem } from '../../runtime/coordinator/tool-system.ts';
import type { ToolSystem } from '../../runtime/coordinator/tool-system.ts';
import { createLogger } from '../../runtime/observability/logger.ts';
import { builtinTools } from '../../runtime/tools/builtins/index.ts';

const MANUALS = path.resolve(import.meta.dirname, '../../manuals');
const admin: Caller = { name: 'ci', scopes: ['admin'], policy: 'default' };
let base: string;
let system: ToolSystem;

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'paddock-manuals-'));
  await mkdir(path.join(base, 'tools'));
  const config = loadConfig({ env: { PADDOCK_DATA: path.join(base, 'data'), PADDOCK_TOOLS: path.join(base, 'tools') }, cwd: base });
  config.manualsDir = MANUALS;
  config.sandbox.workers = 1;
  system = await startToolSystem({ config, log: createLogger('silent'), env: {}, builtins: builtinTools(), watch: false });
});

afterAll(async () => {
  await system.close();
  await rm(base, { recursive: true, force: true });
});

describe('manuals', () => {
  it('has one per built-in, served by tool_manual, naming every parameter', async () => {
    const files = new Set(await readdir(MANUALS));
    for (const tool of builtinTools()) {
      expect(files.has(`${tool.name}.md`), tool.name).toBe(true);
      const text = await readFile(path.join(MANUALS, `${tool.name}.md`), 'utf8');
      expect(text.startsWith(`# ${tool.name}\n`), tool.name).toBe(true);
      for (const parameter of Object.keys((tool.parameters as { properties?: object }).properties ?? {})) {
        expect(text, `${tool.name} documents ${parameter}`).toContain(`\`${parameter}\``);
      }
      expect(await system.coordinator.invoke('tool_manual', { caller: admin, params: { name: tool.name } })).toMatchObject({ ok: true, content: text });
    }
  });

  it('write_tool.md documents the format: exports, ctx, results, grants, the isolate, NotCapable', async () => {
    const text = await readFile(path.join(MANUALS, 'write_tool.md'), 'utf8');
    for (const topic of ['export const parameters', 'ctx.signal', 'ctx.update(text)', 'ctx.callId', 'ctx.sessionId', 'isError', 'terminate',
      'intersection', 'No WebAssembly', 'Nothing of Node', 'npm:', 'Requires net access to "example.com:443", run again with the --allow-net flag']) {
      expect(text, topic).toContain(topic);
    }
  });

  it('write_tool.md\'s complete example loads through write_tool and gives the promised output', async () => {
    const text = await readFile(path.join(MANUALS, 'write_tool.md'), 'utf8');
    const section = text.slice(text.indexOf('## Complete example'));
    const source = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(source).toBeDefined();
    const written = await system.coordinator.invoke('write_tool', { caller: admin, params: { name: 'text_stats', source } });
    expect(written).toMatchObject({ ok: true, metadata: { created: true, kind: 'read', widened: false } });
    const promised = /`test_tool (\{.*\})`/.exec(section)?.[1];
    expect(promised).toBeDefined();
    const checked = await system.coordinator.invoke('test_tool', { caller: admin, params: JSON.parse(promised ?? '{}') });
    expect(checked.content).toMatch(/^PASS: /);

    // The test_tool manual's example output is this tool's real one.
    const testManual = await readFile(path.join(MANUALS, 'test_tool.md'), 'utf8');
    const example = await system.coordinator.invoke('test_tool', { caller: admin, params: { name: 'text_stats', params: { text: 'a b a' }, expect: { contains: 'Words: 3', regex: 'a \\(2\\)' } } });
    expect(testManual).toContain(example.content.replace(/\d+ ms\)/, '4 ms)'));
  });
});
