/**
 * Real parts for agent tests: a tool system (one sandbox worker, user tools from a temp folder,
 * built-ins given by the test), the fake OpenAI-compatible server, and the real SDK client over
 * loopback with fast retries.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { OpenAIModelClient } from '../../runtime/agent/model-client.ts';
import type { ModelClientOptions } from '../../runtime/agent/model-client.ts';
import type { Caller } from '../../runtime/auth/keys.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import type { Config } from '../../runtime/config/schema.ts';
import { startToolSystem } from '../../runtime/coordinator/tool-system.ts';
import type { ToolSystem } from '../../runtime/coordinator/tool-system.ts';
import { createLogger } from '../../runtime/observability/logger.ts';
import type { BuiltinTool } from '../../runtime/tools/contract.ts';
import { startFakeOpenAI } from '../helpers/fake-openai.ts';
import type { FakeOpenAI } from '../helpers/fake-openai.ts';

export const CALLER: Caller = Object.freeze({ name: 'ci', scopes: Object.freeze(['invoke' as const]), policy: 'default' });

/** A user tool module (SPEC §2) with a `ms` param; `body` is the execute function's body. */
export function userTool(name: string, body: string, options: { permissions?: string; description?: string } = {}): string {
  return [
    `export const name = ${JSON.stringify(name)};`,
    `export const description = ${JSON.stringify(options.description ?? `Test tool ${name}.`)};`,
    'export const parameters = { type: "object", properties: { ms: { type: "number" }, text: { type: "string" } }, additionalProperties: false };',
    `export const permissions = ${options.permissions ?? '{}'};`,
    `export default async function execute(params: { ms?: number; text?: string }, ctx: { update(t: string): void; signal: AbortSignal }) { ${body} }`,
  ].join('\n');
}

/** Sleeps `ms`, returns its start and end times as JSON (for overlap checks). */
export const NAP_BODY = 'const start = Date.now(); await new Promise((r) => setTimeout(r, params.ms ?? 0)); return JSON.stringify({ start, end: Date.now() });';

export interface Harness {
  readonly dir: string;
  readonly config: Config;
  readonly system: ToolSystem;
  readonly fake: FakeOpenAI;
  readonly model: OpenAIModelClient;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Built-ins, or a function that makes them from the loaded config (before the tool system starts). */
  readonly builtins?: readonly BuiltinTool[] | ((config: Config) => readonly BuiltinTool[]);
  readonly userTools?: Readonly<Record<string, string>>;
  readonly model?: Partial<ModelClientOptions>;
  /** Edits to the loaded config before the tool system starts. */
  readonly configure?: (config: Config) => void;
  /** Reuse a folder (a restart); a new temp folder otherwise. */
  readonly dir?: string;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = options.dir ?? await mkdtemp(path.join(tmpdir(), 'paddock-agent-'));
  const tools = path.join(dir, 'tools');
  await mkdir(tools, { recursive: true });
  for (const [file, source] of Object.entries(options.userTools ?? {})) await writeFile(path.join(tools, file), source);
  const fake = await startFakeOpenAI();
  const config = loadConfig({ env: { PADDOCK_DATA: path.join(dir, 'data'), PADDOCK_TOOLS: tools, OPENAI_BASE_URL: fake.url }, cwd: dir });
  config.sandbox = { ...config.sandbox, workers: 1, warmIsolates: 1 };
  options.configure?.(config);
  await mkdir(config.workspaceDir, { recursive: true });
  const builtins = typeof options.builtins === 'function' ? options.builtins(config) : options.builtins ?? [];
  const system = await startToolSystem({ config, log: createLogger('silent'), env: {}, builtins, watch: false });
  const model = new OpenAIModelClient({ baseUrl: fake.url, apiKey: 'sk-test', retryBaseMs: 5, retryMaxMs: 200, requestTimeoutMs: 5_000, idleTimeoutMs: 5_000, ...options.model });
  return {
    dir, config, system, fake, model,
    async close() {
      await Promise.all([system.close(), fake.close()]);
      if (options.dir === undefined) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A built-in for tests: `run` gets the params and the signal. */
export function testBuiltin(
  name: string,
  run: (params: Record<string, unknown>, signal: AbortSignal, update: (text: string) => void) => Promise<string | { content: string; metadata?: Record<string, unknown>; terminate?: boolean }>,
  options: { kind?: BuiltinTool['kind']; mode?: BuiltinTool['mode']; parameters?: BuiltinTool['parameters'] } = {},
): BuiltinTool {
  return {
    name, description: `Test built-in ${name}.`, kind: options.kind ?? 'read', mode: options.mode ?? 'parallel',
    parameters: options.parameters ?? { type: 'object', properties: {}, additionalProperties: true },
    async execute(params, context) {
      const result = await run(params as Record<string, unknown>, context.signal, (text) => { context.update(text); });
      return typeof result === 'string' ? result : { content: result.content, isError: false, metadata: result.metadata ?? null, terminate: result.terminate ?? false };
    },
  };
}
