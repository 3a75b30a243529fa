/**
 * Pins: a built-in that calls back into the coordinator (test_tool, code_exec) runs its inner call
 * in its own slot, so built-ins at the concurrency limit cannot wait on each other forever.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config/load.ts';
import { startToolSystem } from '../../runtime/coordinator/tool-system.ts';
import type { ToolSystem } from '../../runtime/coordinator/tool-system.ts';
import { createLogger } from '../../runtime/observability/logger.ts';
import type { BuiltinTool } from '../../runtime/tools/contract.ts';

let base: string;
let system: ToolSystem;
const caller = { name: 'ci', scopes: ['admin'] as const, policy: 'default' };

const nester: BuiltinTool = {
  name: 'nester', description: 'Runs a snippet through its host.', kind: 'execute', mode: 'sequential',
  parameters: { type: 'object', properties: {} },
  execute: async (_params, context) => {
    const inner = await context.host.exec('return 40 + 2;', 'js', context.signal);
    return String(inner.result);
  },
};

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'paddock-nested-'));
  await mkdir(path.join(base, 'tools'));
  const config = loadConfig({ env: { PADDOCK_DATA: path.join(base, 'data'), PADDOCK_TOOLS: path.join(base, 'tools') }, cwd: base });
  config.sandbox.maxConcurrentCalls = 2;
  config.sandbox.maxQueuedCalls = 8;
  config.sandbox.workers = 1;
  system = await startToolSystem({ config, log: createLogger('silent'), env: {}, builtins: [nester], watch: false });
});

afterAll(async () => {
  await system.close();
  await rm(base, { recursive: true, force: true });
});

describe('nested calls', () => {
  it('finish when as many built-ins as the limit call back into the coordinator at once', async () => {
    const calls = Array.from({ length: 4 }, () => system.coordinator.invoke('nester', { caller, params: {}, signal: AbortSignal.timeout(5000) }));
    const results = await Promise.all(calls);
    expect(results.map((result) => result.content)).toEqual(['42', '42', '42', '42']);
  });
});
