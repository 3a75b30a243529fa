/**
 * Pins the operator's view of the sandbox in /metrics: every tool call that ran is counted by its
 * outcome (never by tool name, which agents choose), with its duration; every capability denial by
 * capability; sandbox workers alive and calls in flight read at scrape time; a worker that dies
 * counted as crashed.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config/load.ts';
import { startToolSystem } from '../../runtime/coordinator/tool-system.ts';
import type { ToolSystem } from '../../runtime/coordinator/tool-system.ts';
import { createLogger } from '../../runtime/observability/logger.ts';
import { createMetrics } from '../../runtime/observability/metrics.ts';
import type { Metrics } from '../../runtime/observability/metrics.ts';

let base: string;
let system: ToolSystem;
let metrics: Metrics;
const caller = { name: 'ci', scopes: ['admin'] as const, policy: 'open' };

const tool = (name: string, body: string, permissions = '{}') => [
  `export const name = ${JSON.stringify(name)};`,
  `export const description = "Metrics test tool ${name}.";`,
  'export const parameters = { type: "object", properties: {} };',
  `export const permissions = ${permissions};`,
  `export default async function execute() { ${body} }`,
].join('\n');

/** The value of one sample in the exposition text, or undefined when absent. */
async function sample(name: string): Promise<number | undefined> {
  const text = await metrics.registry.metrics();
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'paddock-metrics-'));
  const tools = path.join(base, 'tools');
  await mkdir(tools);
  await writeFile(path.join(tools, 'fine.ts'), tool('fine', 'return "fine";'));
  await writeFile(path.join(tools, 'thrower.ts'), tool('thrower', 'throw new TypeError("no");'));
  await writeFile(path.join(tools, 'spinner.ts'), tool('spinner', 'for (;;) {}'));
  await writeFile(path.join(tools, 'reader.ts'), tool('reader', 'return await Deno.readTextFile("/etc/hostname");', '{ read: ["./here"] }'));
  const config = loadConfig({ env: { PADDOCK_DATA: path.join(base, 'data'), PADDOCK_TOOLS: tools }, cwd: base });
  config.policies['open'] = { read: true };
  config.sandbox.workers = 1;
  config.sandbox.limits = { ...config.sandbox.limits, cpuTimeMs: 300, wallTimeMs: 3000 };
  metrics = createMetrics({ processMetrics: false });
  system = await startToolSystem({ config, log: createLogger('silent'), env: {}, builtins: [], watch: false, metrics });
});

afterAll(async () => {
  await system.close();
  await rm(base, { recursive: true, force: true });
});

describe('sandbox metrics', () => {
  it('count calls by outcome with their durations, and denials by capability', async () => {
    await system.coordinator.invoke('fine', { caller, params: {} });
    await system.coordinator.invoke('fine', { caller, params: {} });
    await system.coordinator.invoke('thrower', { caller, params: {} });
    await system.coordinator.invoke('spinner', { caller, params: {} });
    await system.coordinator.invoke('reader', { caller, params: {} });
    await system.coordinator.exec({ caller, code: 'return 1 + 1;', language: 'ts' });
    expect(await sample('paddock_tool_calls_total{outcome="ok"}')).toBe(3);
    expect(await sample('paddock_tool_calls_total{outcome="tool_error"}')).toBe(1);
    expect(await sample('paddock_tool_calls_total{outcome="not_capable"}')).toBe(1);
    expect(await sample('paddock_tool_calls_total{outcome="timeout"}')).toBe(1);
    expect(await sample('paddock_tool_call_duration_seconds_count{outcome="ok"}')).toBe(3);
    expect(await sample('paddock_capability_denials_total{capability="read"}')).toBe(1);
    expect(await metrics.registry.metrics()).not.toMatch(/fine|thrower|reader/);
  });

  it('read workers alive and calls in flight at scrape time, and count a worker that died as crashed', async () => {
    expect(await sample('paddock_sandbox_workers')).toBe(1);
    expect(await sample('paddock_sandbox_calls_in_flight')).toBe(0);
    const [pid] = system.sandbox.pool.pids();
    if (pid === undefined) throw new Error('no worker');
    process.kill(pid, 'SIGKILL');
    await expect.poll(() => sample('paddock_sandbox_worker_exits_total{reason="crashed"}'), { timeout: 5000 }).toBe(1);
    await system.sandbox.ready();
    expect(await system.coordinator.invoke('fine', { caller, params: {} })).toMatchObject({ ok: true });
  });
});
