/**
 * Agent-loop overhead: what one loop step costs the coordinator itself, with a model that answers
 * at once (the fake OpenAI-compatible server on loopback, through the real openai SDK) and tool
 * time left out (issue 6, target p50 <= 2 ms). Runs go through the session service as the HTTP API
 * drives it: the store in a temp data folder (both buffers written every step), the tool view, the
 * coordinator's choke point, the events. Each measured run is a fresh session of `--steps` steps:
 * every step but the last calls the no-op built-in tool, the last answers with text.
 *
 * Per step, from one step-start event to the next (or to the run's end):
 *   - "step, without tool time"   the figure: everything but the tool's own execution;
 *   - "model round trip"          inside the model client (SDK, HTTP over loopback, the fake's answer);
 *   - "loop's own work"           what is left: scheduling, validation, events, SQLite, settings.
 * Per run: "run set-up" (user message stored, tools listed) before the first step starts.
 *
 *   npm run bench:agent -- [--runs N] [--steps N] [--quick] [--stream] [--user-tool] [--json out.json]
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { AgentEvent } from '../runtime/agent/events.ts';
import { OpenAIModelClient } from '../runtime/agent/model-client.ts';
import type { ModelClient } from '../runtime/agent/model-client.ts';
import type { Caller } from '../runtime/auth/keys.ts';
import { loadConfig } from '../runtime/config/load.ts';
import { startToolSystem } from '../runtime/coordinator/tool-system.ts';
import { createLogger } from '../runtime/observability/logger.ts';
import { openAgentRuntime } from '../runtime/sessions/agent-runtime.ts';
import type { BuiltinTool } from '../runtime/tools/contract.ts';
import { startFakeOpenAI } from '../test/helpers/fake-openai.ts';
import { benchResponder } from './bench-agent-model.ts';
import { benchMain, integerOption, parseBenchArgs, summarize, summaryTable } from './bench-common.ts';
import type { Summary } from './bench-common.ts';

const USAGE = `Usage: npm run bench:agent -- [options]
  --runs N       measured runs (default 60; --quick: 4)
  --steps N      loop steps per run (default 10)
  --stream       ask the model for streamed answers (default: one JSON answer)
  --user-tool    call a sandboxed user tool instead of the no-op built-in
  --model-thread run the fake model in its own thread (default: in this process)
  --quick        a short run (the test suite runs this)
  --json FILE    also write the results as JSON
`;

export interface AgentBenchOptions {
  runs: number;
  steps: number;
  /** Unmeasured runs first (JIT, SQLite statements, the SDK's first connection). */
  warmup: number;
  stream: boolean;
  userTool: boolean;
  modelThread: boolean;
  json: string | undefined;
  quick: boolean;
}

export interface AgentBenchResult {
  machine: { cores: number; cpuModel: string; node: string; platform: string; loadAverage: number[] };
  options: AgentBenchOptions;
  stepWithoutTools: Summary;
  modelRoundTrip: Summary;
  loopOwn: Summary;
  toolTime: Summary;
  runSetUp: Summary;
  target: { p50Ms: number; met: boolean };
}

const TARGET_P50_MS = 2;
const caller: Caller = { name: 'bench', scopes: ['invoke'], policy: 'default' };

export function parseOptions(argv: readonly string[]): AgentBenchOptions {
  const values = parseBenchArgs(argv, {
    runs: { type: 'string' },
    steps: { type: 'string' },
    stream: { type: 'boolean', default: false },
    'user-tool': { type: 'boolean', default: false },
    'model-thread': { type: 'boolean', default: false },
  }, USAGE);
  const quick = values.quick;
  return {
    runs: integerOption('runs', values.runs, quick ? 4 : 60, 1),
    steps: integerOption('steps', values.steps, 10, 2),
    warmup: quick ? 1 : 5,
    stream: values.stream,
    userTool: values['user-tool'],
    modelThread: values['model-thread'],
    json: values.json,
    quick,
  };
}

const noop: BuiltinTool = {
  name: 'bench_noop', description: 'Does nothing (agent-loop benchmark).', kind: 'read', mode: 'parallel',
  parameters: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false },
  execute: () => Promise.resolve('ok'),
};

const USER_TOOL = [
  'export const name = "bench_user";',
  'export const description = "Returns ok (agent-loop benchmark).";',
  'export const parameters = { type: "object", properties: { n: { type: "integer" } }, additionalProperties: false };',
  'export const permissions = {};',
  'export default function execute() { return "ok"; }',
].join('\n');

/**
 * The fake model: in this process by default (its own small work then counts as overhead), or in
 * its own thread (scripts/bench-agent-model.ts; thread hand-offs then count instead, which on a
 * busy machine with few cores costs more). Either is an upper bound of the coordinator's share.
 */
async function startModel(steps: number, tool: string, thread: boolean): Promise<{ url: string; close(): Promise<void> }> {
  if (!thread) {
    const fake = await startFakeOpenAI();
    fake.fallback(benchResponder(steps, tool));
    return fake;
  }
  const worker = new Worker(new URL('./bench-agent-model.ts', import.meta.url), { workerData: { steps, tool } });
  const url = await new Promise<string>((resolve, reject) => {
    worker.once('message', (message: unknown) => { resolve(String(message)); });
    worker.once('error', reject);
  });
  return {
    url,
    close: async () => {
      const exited = new Promise<void>((resolve) => { worker.once('exit', () => { resolve(); }); });
      worker.postMessage('close');
      await exited;
    },
  };
}

interface StepTimes {
  start: number;
  end: number;
  toolStart: number | undefined;
  toolEnd: number | undefined;
  model: number;
}

export async function benchAgentLoop(options: AgentBenchOptions): Promise<AgentBenchResult> {
  const base = await mkdtemp(path.join(tmpdir(), 'paddock-bench-agent-'));
  const tools = path.join(base, 'tools');
  await mkdir(tools);
  await writeFile(path.join(tools, 'bench_user.ts'), USER_TOOL);
  const fake = await startModel(options.steps, options.userTool ? 'bench_user' : 'bench_noop', options.modelThread);
  const config = loadConfig({ env: { PADDOCK_DATA: path.join(base, 'data'), PADDOCK_TOOLS: tools, OPENAI_BASE_URL: fake.url }, cwd: base });
  config.sandbox.workers = 1;
  const profile = config.profiles['default'];
  if (profile === undefined) throw new Error('the config has no default profile');
  config.profiles['default'] = { ...profile, maxSteps: options.steps, stream: options.stream };
  await mkdir(config.workspaceDir, { recursive: true });
  const log = createLogger('silent');

  // The model client, timed: each call's duration is the model round trip of its step.
  const sdk = new OpenAIModelClient({ baseUrl: fake.url, apiKey: 'bench', maxRetries: 0 });
  let lastModelMs = 0;
  const model: ModelClient = {
    async complete(request, call) {
      const started = performance.now();
      try {
        return await sdk.complete(request, call);
      } finally {
        lastModelMs = performance.now() - started;
      }
    },
  };
  const agent = openAgentRuntime({ config, log, model });
  const system = await startToolSystem({ config, log, env: {}, builtins: [noop, ...agent.builtins], watch: false });
  const sessions = agent.start(system);

  const stepsWithout: number[] = [];
  const modelTimes: number[] = [];
  const own: number[] = [];
  const toolTimes: number[] = [];
  const setUps: number[] = [];
  try {
    for (let index = 0; index < options.warmup + options.runs; index++) {
      const { id } = sessions.create(caller);
      const steps: StepTimes[] = [];
      let current: StepTimes | undefined;
      const began = performance.now();
      const onEvent = (event: AgentEvent): void => {
        const now = performance.now();
        switch (event.type) {
          case 'step-start':
            if (current !== undefined) current.end = now;
            current = { start: now, end: Number.NaN, toolStart: undefined, toolEnd: undefined, model: 0 };
            steps.push(current);
            break;
          case 'tool-call-start':
            if (current !== undefined) {
              current.model = lastModelMs;
              current.toolStart ??= now;
            }
            break;
          case 'tool-result':
            if (current !== undefined) current.toolEnd = now;
            break;
          case 'run-end':
          case 'run-error':
            if (current !== undefined) {
              current.end = now;
              if (current.toolStart === undefined) current.model = lastModelMs;
            }
            break;
          default:
            break;
        }
      };
      const result = await sessions.begin(caller, id).run('Run the benchmark.', { onEvent });
      if (result.status !== 'ended' || result.reason !== 'answered' || result.steps !== options.steps) {
        throw new Error(`a benchmark run ended unexpectedly: ${JSON.stringify(result.status === 'ended' ? { reason: result.reason, steps: result.steps } : result.error)}`);
      }
      await sessions.delete(caller, id);
      if (index < options.warmup) continue;
      setUps.push((steps[0]?.start ?? began) - began);
      for (const step of steps) {
        const tool = step.toolStart === undefined || step.toolEnd === undefined ? 0 : step.toolEnd - step.toolStart;
        const without = step.end - step.start - tool;
        stepsWithout.push(without);
        modelTimes.push(step.model);
        own.push(without - step.model);
        if (step.toolStart !== undefined) toolTimes.push(tool);
      }
    }
  } finally {
    await sessions.close();
    await system.close();
    await fake.close();
    await rm(base, { recursive: true, force: true });
  }
  const stepWithoutTools = summarize(stepsWithout);
  return {
    machine: { cores: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown CPU', node: process.version, platform: `${process.platform} ${process.arch}`, loadAverage: loadavg() },
    options,
    stepWithoutTools,
    modelRoundTrip: summarize(modelTimes),
    loopOwn: summarize(own),
    toolTime: summarize(toolTimes),
    runSetUp: summarize(setUps),
    target: { p50Ms: TARGET_P50_MS, met: stepWithoutTools.median <= TARGET_P50_MS },
  };
}

export function formatReport(result: AgentBenchResult): string {
  const { machine, options } = result;
  const fmt = (value: number): string => (Number.isNaN(value) ? '-' : value.toFixed(2));
  const { header, row } = summaryTable({ label: 28, n: 6 }, 2);
  return [
    `Paddock agent-loop overhead: ${machine.cores} cores (${machine.cpuModel}), ${machine.platform}, node ${machine.node}; load ${machine.loadAverage.map((value) => value.toFixed(2)).join(' ')}`,
    `${options.runs} runs of ${options.steps} steps after ${options.warmup} warm-up; model ${options.stream ? 'streamed' : 'not streamed'} `
      + `(fake server answering at once ${options.modelThread ? 'in its own thread' : 'in this process'}, real SDK over loopback); `
      + `tool: ${options.userTool ? 'a sandboxed user tool' : 'a no-op built-in'}${options.quick ? ' (quick mode: too few samples for a figure)' : ''}`,
    '',
    header('per step'),
    row('step, without tool time', result.stepWithoutTools),
    row('  model round trip', result.modelRoundTrip),
    row('  loop\'s own work', result.loopOwn),
    row('tool time (left out)', result.toolTime),
    row('run set-up (per run)', result.runSetUp),
    '',
    `Target p50 <= ${result.target.p50Ms} ms per step without tool time: ${result.target.met ? 'met' : 'MISSED'} (median ${fmt(result.stepWithoutTools.median)} ms, p90 ${fmt(result.stepWithoutTools.p90)} ms)`,
    '',
  ].join('\n');
}

if (import.meta.main) await benchMain(parseOptions, benchAgentLoop, formatReport);
