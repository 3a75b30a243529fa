/**
 * The session API over real parts: the tool system (one sandbox worker), the store in a temp data
 * folder, the session service with the real SDK client against the fake model server, and the app
 * from createApp with the session routes mounted on it, listening on a loopback port. Start it
 * again on the same folder (`dir`) to see what a restart keeps.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ModelClient } from '../../runtime/agent/model-client.ts';
import { KeyStore, hashKey } from '../../runtime/auth/keys.ts';
import type { Config } from '../../runtime/config/schema.ts';
import { createApp } from '../../runtime/http/app.ts';
import { listen } from '../../runtime/http/listen.ts';
import { sessionRoutes } from '../../runtime/http/routes/sessions.ts';
import { createLogger } from '../../runtime/observability/logger.ts';
import { createMetrics } from '../../runtime/observability/metrics.ts';
import type { SessionService } from '../../runtime/sessions/session-service.ts';
import { openAgentRuntime } from '../../runtime/sessions/agent-runtime.ts';
import type { AgentRuntime } from '../../runtime/sessions/agent-runtime.ts';
import type { SessionServiceLimits } from '../../runtime/sessions/session-service.ts';
import type { Store } from '../../runtime/sessions/store.ts';
import type { BuiltinTool } from '../../runtime/tools/contract.ts';
import { startHarness } from '../agent/harness.ts';
import type { Harness, HarnessOptions } from '../agent/harness.ts';
import { INVOKE_KEY, TEST_KEYS } from '../helpers/app.ts';

export { ADMIN_KEY, INVOKE_KEY } from '../helpers/app.ts';
export const OTHER_KEY = 'pdk_test-other-key-0123456789';
const KEYS = [...TEST_KEYS, { name: 'other', sha256: hashKey(OTHER_KEY), scopes: ['invoke' as const] }];

export interface SessionHarness {
  readonly dir: string;
  readonly url: string;
  readonly base: Harness;
  readonly store: Store;
  readonly sessions: SessionService;
  readonly config: Config;
  /** A request to the running server with a bearer key (the "ci" invoke key unless `key`). */
  request(path: string, init?: RequestInit & { key?: string }): Promise<Response>;
  /** JSON POST. */
  post(path: string, body: unknown, init?: RequestInit & { key?: string }): Promise<Response>;
  close(): Promise<void>;
}

export interface SessionHarnessOptions extends Omit<HarnessOptions, 'builtins'> {
  readonly limits?: Partial<SessionServiceLimits>;
  /** Register the state tools (todo, scratchpad, memory_*, profiles, spawn_agent, reflect). */
  readonly stateTools?: boolean;
  readonly builtins?: readonly BuiltinTool[];
}

export async function startSessionHarness(options: SessionHarnessOptions = {}): Promise<SessionHarness> {
  const dir = options.dir ?? await mkdtemp(path.join(tmpdir(), 'paddock-sessions-'));
  // Wired as the service wires it: the agent runtime's store and state tools before the tool system.
  let runtime: AgentRuntime | undefined;
  const ready: { model?: ModelClient } = {};
  const lazyModel: ModelClient = { complete: (request, call) => (ready.model ?? fail('the model client is not ready')).complete(request, call) };
  const base = await startHarness({
    ...options, dir,
    builtins: (config) => {
      runtime = openAgentRuntime({ config, log: createLogger('silent'), model: lazyModel, limits: options.limits });
      return [...(options.builtins ?? []), ...(options.stateTools === true ? runtime.builtins : [])];
    },
  });
  ready.model = base.model;
  const { config } = base;
  if (runtime === undefined) throw new Error('harness: the agent runtime did not open');
  const { store } = runtime;
  const sessions = runtime.start(base.system);
  const app = createApp({ config, log: createLogger('silent'), metrics: createMetrics(), keys: new KeyStore(KEYS), version: '0.0.0-test', tools: base.system });
  app.route('/v1', sessionRoutes(sessions));
  const server: Server = await listen(app.fetch, { host: '127.0.0.1', port: 0, headersTimeoutMs: 10_000 });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const request = (target: string, init: RequestInit & { key?: string } = {}): Promise<Response> => {
    const { key = INVOKE_KEY, ...rest } = init;
    const headers = new Headers(rest.headers);
    headers.set('authorization', `Bearer ${key}`);
    if (rest.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    return fetch(`${url}${target}`, { ...rest, headers });
  };
  return {
    dir, url, base, store, sessions, config, request,
    post: (target, body, init = {}) => request(target, { ...init, method: 'POST', body: JSON.stringify(body) }),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => { server.close(() => { resolve(); }); });
      await sessions.close();
      await base.close();
      if (options.dir === undefined) await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface SseEvent {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/**
 * Reads a text/event-stream response into events as they arrive. Stopping part way does not close
 * the stream (a `break` out of `for await` over the body would, and the server would see the client
 * leave); `close` does.
 */
export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = '';
  readonly #ready: SseEvent[] = [];

  constructor(response: Response) {
    if (response.body === null) throw new Error('the response has no body');
    this.#reader = response.body.getReader();
  }

  /** The next event, or undefined at the end of the stream. */
  async next(): Promise<SseEvent | undefined> {
    for (;;) {
      const ready = this.#ready.shift();
      if (ready !== undefined) return ready;
      const { done, value } = await this.#reader.read();
      if (done) return undefined;
      this.#buffer += this.#decoder.decode(value, { stream: true });
      let end: number;
      while ((end = this.#buffer.indexOf('\n\n')) !== -1) {
        const frame = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of frame.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
        }
        this.#ready.push({ event, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
      }
    }
  }

  /** Events up to and including the first named `name`. */
  async until(name: string): Promise<SseEvent[]> {
    const seen: SseEvent[] = [];
    for (;;) {
      const event = await this.next();
      if (event === undefined) throw new Error(`the stream ended before a "${name}" event; got ${seen.map((item) => item.event).join(', ')}`);
      seen.push(event);
      if (event.event === name) return seen;
    }
  }

  /** Every remaining event, to the end of the stream. */
  async rest(): Promise<SseEvent[]> {
    const seen: SseEvent[] = [];
    for (let event = await this.next(); event !== undefined; event = await this.next()) seen.push(event);
    return seen;
  }

  async close(): Promise<void> {
    await this.#reader.cancel();
  }
}

function fail(message: string): never {
  throw new Error(message);
}
