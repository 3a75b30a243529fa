import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KeyStore } from '../../runtime/auth/keys.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import type { Config } from '../../runtime/config/schema.ts';
import { startToolSystem } from '../../runtime/coordinator/tool-system.ts';
import type { ToolSystem } from '../../runtime/coordinator/tool-system.ts';
import { createApp } from '../../runtime/http/app.ts';
import { listen } from '../../runtime/http/listen.ts';
import { createMetrics } from '../../runtime/observability/metrics.ts';
import type { RegistryChange } from '../../runtime/registry/registry.ts';
import type { BuiltinTool } from '../../runtime/tools/contract.ts';
import { TEST_KEYS, captureLog } from '../helpers/app.ts';
import type { LogCapture } from '../helpers/app.ts';

/** A built-in tool for the tests: it sends its text as an update, then returns it. */
export const echoBuiltin: BuiltinTool = {
  name: 'echo', description: 'Echoes its text.', kind: 'read', mode: 'parallel',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  execute: (params, ctx) => {
    const { text } = params as { text: string };
    ctx.update(`echoing ${text}`);
    return Promise.resolve(text);
  },
};

/** A user tool module with the four definitions; `body` is the body of execute(params, ctx). */
export function toolSource(name: string, body: string, options: { permissions?: string; parameters?: string } = {}): string {
  return [
    `export const name = ${JSON.stringify(name)};`,
    `export const description = "Test tool ${name}.";`,
    `export const parameters = ${options.parameters ?? '{ type: "object", properties: { n: { type: "number" } }, required: ["n"], additionalProperties: false }'};`,
    `export const permissions = ${options.permissions ?? '{}'};`,
    `export default async function execute(params: any, ctx: any) {\n  ${body}\n}`,
    '',
  ].join('\n');
}

export interface ToolAppOptions {
  /** Files written into the tools folder before the system starts. */
  files?: Record<string, string>;
  /** Files written into the manuals folder. */
  manuals?: Record<string, string>;
  sandbox?: Partial<Omit<Config['sandbox'], 'limits'>>;
  http?: Partial<Config['http']>;
  /** The "default" policy, which the test keys use. @defaultValue {} (grants nothing) */
  policy?: Config['policies'][string];
}

export interface ToolApp {
  readonly app: ReturnType<typeof createApp>;
  readonly system: ToolSystem;
  readonly config: Config;
  readonly toolsDir: string;
  readonly logs: LogCapture;
  /** Resolves with the next registry change that `matches` (subscribed now, so call it before causing the change). */
  nextChange(matches: (change: RegistryChange) => boolean): Promise<RegistryChange>;
  /** Serves the app on 127.0.0.1 (a real socket); resolves with its base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/**
 * The real thing in a temp folder: a ToolSystem (one sandbox worker, watching its tools folder)
 * with the `echo` built-in, behind createApp with the test keys.
 */
export async function startToolApp(options: ToolAppOptions = {}): Promise<ToolApp> {
  const base = await mkdtemp(path.join(tmpdir(), 'paddock-http-'));
  const toolsDir = path.join(base, 'tools');
  const manualsDir = path.join(base, 'manuals');
  await mkdir(toolsDir);
  await mkdir(manualsDir);
  for (const [file, text] of Object.entries(options.files ?? {})) await writeFile(path.join(toolsDir, file), text);
  for (const [file, text] of Object.entries(options.manuals ?? {})) await writeFile(path.join(manualsDir, file), text);

  const loaded = loadConfig({ env: { PADDOCK_DATA: path.join(base, 'data'), PADDOCK_TOOLS: toolsDir }, cwd: base });
  const config: Config = {
    ...loaded,
    apiKeys: TEST_KEYS,
    manualsDir,
    http: { ...loaded.http, ...options.http },
    sandbox: { ...loaded.sandbox, workers: 1, warmIsolates: 1, ...options.sandbox },
    policies: { default: options.policy ?? {} },
  };
  await mkdir(config.workspaceDir, { recursive: true });
  const logs = captureLog();
  const system = await startToolSystem({ config, log: logs.log, env: {}, builtins: [echoBuiltin] });
  const app = createApp({ config, log: logs.log, metrics: createMetrics(), keys: new KeyStore(config.apiKeys), version: '0.0.0-test', tools: system });
  let server: Server | undefined;

  return {
    app, system, config, toolsDir, logs,
    nextChange: (matches) => new Promise((resolve) => {
      const unsubscribe = system.subscribe((change) => {
        if (!matches(change)) return;
        unsubscribe();
        resolve(change);
      });
    }),
    async listen() {
      server ??= await listen(app.fetch, { host: '127.0.0.1', port: 0, headersTimeoutMs: config.http.headersTimeoutMs });
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async close() {
      if (server !== undefined) {
        const closed = new Promise((resolve) => server?.close(resolve));
        server.closeAllConnections();
        await closed;
      }
      await system.close();
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** One server-sent event. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/** Splits a complete text/event-stream body into its events. */
export function parseSse(text: string): SseEvent[] {
  return text.split('\n\n').filter((block) => block.trim() !== '').map((block) => {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice('event: '.length);
      else if (line.startsWith('data: ')) data.push(line.slice('data: '.length));
    }
    return { event, data: data.join('\n') };
  });
}

/** Reads an event stream as it arrives: `next()` resolves with each event in turn, or undefined at the end. */
export function sseReader(body: ReadableStream<Uint8Array>): { next(): Promise<SseEvent | undefined>; cancel(): Promise<void> } {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    async next() {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end !== -1) {
          const [event] = parseSse(buffer.slice(0, end + 2));
          buffer = buffer.slice(end + 2);
          if (event !== undefined) return event;
          continue;
        }
        const { done, value } = await reader.read();
        if (done) return undefined;
        buffer += value;
      }
    },
    cancel: () => reader.cancel(),
  };
}
