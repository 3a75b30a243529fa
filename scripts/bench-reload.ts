/**
 * Reload latency: from a tool file saved in tools/ to its new version answering a call through the
 * coordinator, with the watcher on, as a running service sees it (SPEC §4; issue 5, target
 * p50 <= 100 ms). Each iteration rewrites one tool with a new return value, then:
 *   - "watcher: swapped"     saved -> the registry swapped the new version in (watch, debounce, bundle, describe, validate);
 *   - "watcher: answering"   saved -> the first call through the coordinator returned the new value;
 *   - "write_tool: answering" the write_tool built-in called -> the tool returned the new value.
 *
 *   npm run bench:reload -- [--iterations N] [--quick] [--workers N] [--json out.json]
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { Caller } from '../runtime/auth/keys.ts';
import { loadConfig } from '../runtime/config/load.ts';
import { startToolSystem } from '../runtime/coordinator/tool-system.ts';
import type { ToolSystem } from '../runtime/coordinator/tool-system.ts';
import { createLogger } from '../runtime/observability/logger.ts';
import { builtinTools } from '../runtime/tools/builtins/index.ts';
import { benchMain, integerOption, parseBenchArgs, summarize, summaryTable } from './bench-common.ts';
import type { Summary } from './bench-common.ts';

const USAGE = `Usage: npm run bench:reload -- [options]
  --iterations N   measured saves per path (default 60; --quick: 5)
  --quick          a short run (the test suite runs this)
  --workers N      sandbox worker processes (default 1)
  --json FILE      also write the results as JSON
`;

export interface ReloadBenchOptions {
  iterations: number;
  /** Unmeasured saves first (the first bundles warm esbuild and the worker's code cache). */
  warmup: number;
  workers: number;
  json: string | undefined;
  quick: boolean;
}

export interface ReloadBenchResult {
  machine: { cores: number; cpuModel: string; node: string; platform: string; loadAverage: number[] };
  options: ReloadBenchOptions;
  watcherSwapped: Summary;
  watcherAnswering: Summary;
  writeToolAnswering: Summary;
  /** Iterations whose new version never answered within the deadline. */
  timeouts: number;
  target: { p50Ms: number; met: boolean };
}

const TARGET_P50_MS = 100;
const DEADLINE_MS = 5000;
const SETTLE_MS = 40;
const TOOL = 'bench_reload';
const admin: Caller = { name: 'bench', scopes: ['admin'], policy: 'default' };

export function parseOptions(argv: readonly string[]): ReloadBenchOptions {
  const values = parseBenchArgs(argv, { iterations: { type: 'string' }, workers: { type: 'string' } }, USAGE);
  const quick = values.quick;
  return {
    iterations: integerOption('iterations', values.iterations, quick ? 5 : 60),
    warmup: quick ? 1 : 3,
    workers: integerOption('workers', values.workers, 1),
    json: values.json,
    quick,
  };
}

function toolSource(version: number): string {
  return [
    `export const name = "${TOOL}";`,
    'export const description = "Returns its version (reload benchmark).";',
    'export const parameters = { type: "object", properties: {}, additionalProperties: false };',
    'export const permissions = {};',
    `export default function execute() { return "v${version}"; }`,
  ].join('\n');
}

/** Resolves with the time of the next registry change of the benchmark tool (or rejects past the deadline). */
function nextSwap(system: ToolSystem): { promise: Promise<number>; cancel: () => void } {
  let cancel = (): void => undefined;
  const promise = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => { unsubscribe(); reject(new Error('no swap before the deadline')); }, DEADLINE_MS);
    const unsubscribe = system.subscribe((change) => {
      if (change.name !== TOOL || change.type === 'tool-removed') return;
      clearTimeout(timer);
      unsubscribe();
      resolve(performance.now());
    });
    cancel = () => { clearTimeout(timer); unsubscribe(); };
  });
  return { promise, cancel };
}

async function answers(system: ToolSystem, expected: string): Promise<boolean> {
  const outcome = await system.coordinator.invoke(TOOL, { caller: admin, params: {} });
  return outcome.ok && outcome.content === expected;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One save through the watcher: [saved -> swapped, saved -> answering] in ms, or undefined past the deadline. */
async function measureWatcherSave(system: ToolSystem, file: string, version: number): Promise<[number, number] | undefined> {
  const swap = nextSwap(system);
  const saved = performance.now();
  await writeFile(file, toolSource(version));
  try {
    const swapped = await swap.promise;
    // A later reload of the same save is a no-op; the first answer after the swap is the new version.
    while (!(await answers(system, `v${version}`))) {
      if (performance.now() - saved > DEADLINE_MS) return undefined;
      await pause(1);
    }
    return [swapped - saved, performance.now() - saved];
  } catch {
    swap.cancel();
    return undefined;
  }
}

async function measureWriteTool(system: ToolSystem, version: number): Promise<number | undefined> {
  const started = performance.now();
  const written = await system.coordinator.invoke('write_tool', { caller: admin, params: { name: TOOL, source: toolSource(version) } });
  if (!written.ok) throw new Error(`write_tool failed: ${written.content}`);
  return (await answers(system, `v${version}`)) ? performance.now() - started : undefined;
}

export async function benchReload(options: ReloadBenchOptions): Promise<ReloadBenchResult> {
  const base = await mkdtemp(path.join(tmpdir(), 'paddock-bench-reload-'));
  const tools = path.join(base, 'tools');
  await mkdir(tools);
  const file = path.join(tools, `${TOOL}.ts`);
  await writeFile(file, toolSource(0));
  const config = loadConfig({ env: { PADDOCK_DATA: path.join(base, 'data'), PADDOCK_TOOLS: tools }, cwd: base });
  config.sandbox.workers = options.workers;
  const system = await startToolSystem({ config, log: createLogger('silent'), env: {}, builtins: builtinTools(), watch: true });
  const swapped: number[] = [];
  const answering: number[] = [];
  const writeTool: number[] = [];
  let timeouts = 0;
  try {
    if (!(await answers(system, 'v0'))) throw new Error('the benchmark tool did not load');
    let version = 0;
    for (let index = 0; index < options.warmup + options.iterations; index++) {
      const measured = await measureWatcherSave(system, file, ++version);
      await pause(SETTLE_MS); // lets trailing watcher events of this save finish before the next one
      if (index < options.warmup) continue;
      if (measured === undefined) timeouts++;
      else {
        swapped.push(measured[0]);
        answering.push(measured[1]);
      }
    }
    for (let index = 0; index < options.warmup + options.iterations; index++) {
      const measured = await measureWriteTool(system, ++version);
      await pause(SETTLE_MS); // the rename is seen by the watcher too (an unchanged reload)
      if (index < options.warmup) continue;
      if (measured === undefined) timeouts++;
      else writeTool.push(measured);
    }
  } finally {
    await system.close();
    await rm(base, { recursive: true, force: true });
  }
  const watcherAnswering = summarize(answering);
  return {
    machine: { cores: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown CPU', node: process.version, platform: `${process.platform} ${process.arch}`, loadAverage: loadavg() },
    options,
    watcherSwapped: summarize(swapped),
    watcherAnswering,
    writeToolAnswering: summarize(writeTool),
    timeouts,
    target: { p50Ms: TARGET_P50_MS, met: timeouts === 0 && watcherAnswering.median <= TARGET_P50_MS },
  };
}

export function formatReport(result: ReloadBenchResult): string {
  const { machine, options } = result;
  const fmt = (value: number): string => (Number.isNaN(value) ? '-' : value.toFixed(1));
  const { header, row } = summaryTable({ label: 24, n: 5 }, 1);
  return [
    `Paddock reload latency: ${machine.cores} cores (${machine.cpuModel}), ${machine.platform}, node ${machine.node}; load ${machine.loadAverage.map((value) => value.toFixed(2)).join(' ')}`,
    `${options.iterations} saves per path after ${options.warmup} warm-up, ${options.workers} sandbox worker${options.workers === 1 ? '' : 's'}, watcher on${options.quick ? ' (quick mode: too few samples for a figure)' : ''}`,
    '',
    header('path'),
    row('watcher: swapped', result.watcherSwapped),
    row('watcher: answering', result.watcherAnswering),
    row('write_tool: answering', result.writeToolAnswering),
    '',
    `Target p50 <= ${result.target.p50Ms} ms (file saved -> new version answering): ${result.target.met ? 'met' : 'MISSED'} (median ${fmt(result.watcherAnswering.median)} ms, p90 ${fmt(result.watcherAnswering.p90)} ms${result.timeouts > 0 ? `, ${result.timeouts} saves never answered within ${DEADLINE_MS} ms` : ''})`,
    '',
  ].join('\n');
}

if (import.meta.main) await benchMain(parseOptions, benchReload, formatReport);
