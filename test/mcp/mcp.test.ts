/**
 * Pins POST|GET|DELETE /mcp: the same tools as /v1 over MCP (Streamable HTTP, stateful sessions),
 * driven by the SDK's own client over a real loopback socket, with a real tool system (sandbox
 * workers, registry, watching loader) behind it. Tool failures and bad arguments are isError
 * results; an unknown tool is a protocol error; ctx.update becomes notifications/progress;
 * a reload reaches open sessions as notifications/tools/list_changed; cancelling (notification or
 * dropped request) aborts the call; sessions are bounded, owned by their caller and expire.
 */
import http from 'node:http';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { KeyStore } from '../../runtime/auth/keys.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import type { Config } from '../../runtime/config/schema.ts';
import { startToolSystem } from '../../runtime/coordinator/tool-system.ts';
import type { ToolSystem } from '../../runtime/coordinator/tool-system.ts';
import { createApp } from '../../runtime/http/app.ts';
import type { AppDeps } from '../../runtime/http/deps.ts';
import { listen } from '../../runtime/http/listen.ts';
import type { McpRouteOptions } from '../../runtime/http/routes/mcp.ts';
import type { McpSessions } from '../../runtime/mcp/sessions.ts';
import { OVERLOADED_ERROR_CODE } from '../../runtime/mcp/tool-server.ts';
import { createLogger } from '../../runtime/observability/logger.ts';
import { createMetrics } from '../../runtime/observability/metrics.ts';
import { ADMIN_KEY, INVOKE_KEY, TEST_KEYS, bearer, expectProblem } from '../helpers/app.ts';

const toolSource = (name: string, body: string, parameters = '{ type: "object", properties: {}, additionalProperties: false }') => [
  `export const name = ${JSON.stringify(name)};`,
  `export const description = "Test tool ${name}.";`,
  `export const parameters = ${parameters};`,
  'export const permissions = {};',
  `export default async function execute(params: any, ctx: { update(text: string): void; signal: AbortSignal }) { ${body} }`,
].join('\n');

const TOOLS: Record<string, string> = {
  'echo.ts': toolSource('echo', 'return params.text;', '{ type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false }'),
  'fail.ts': toolSource('fail', 'throw new Error("the tool broke on purpose");'),
  'steps.ts': toolSource('steps', 'ctx.update("step 1"); ctx.update("step 2"); ctx.update("step 3"); return "done";'),
  // Announces that it runs, then waits far beyond any test (the wall-time limit is 10 s).
  'slow.ts': toolSource('slow', 'ctx.update("started"); await new Promise((resolve) => setTimeout(resolve, 60_000)); return "finished";'),
};

let base: string;
let toolsDir: string;
let config: Config;
let system: ToolSystem;
const servers: HttpServer[] = [];
let url: URL;

async function serve(deps: AppDeps, options: McpRouteOptions = {}): Promise<{ url: URL; sessions: McpSessions | undefined }> {
  let sessions: McpSessions | undefined;
  const app = createApp({ ...deps, mcp: { ...options, onSessions: (created) => { sessions = created; } } });
  const server = await listen(app.fetch, { host: '127.0.0.1', port: 0, headersTimeoutMs: 30_000 });
  servers.push(server);
  onClose.push(() => sessions?.close() ?? Promise.resolve());
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`), sessions };
}
const onClose: (() => Promise<void>)[] = [];

function depsFor(tools: ToolSystem | undefined): AppDeps {
  return { config, log: createLogger('silent'), metrics: createMetrics(), keys: new KeyStore(config.apiKeys), version: '0.0.0-test', tools };
}

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'paddock-mcp-'));
  toolsDir = path.join(base, 'tools');
  await mkdir(toolsDir);
  for (const [file, source] of Object.entries(TOOLS)) await writeFile(path.join(toolsDir, file), source);
  const loaded = loadConfig({ env: { PADDOCK_DATA: path.join(base, 'data'), PADDOCK_TOOLS: toolsDir }, cwd: base });
  // One call at a time and no queue: a second concurrent call is refused (the overload test relies on it).
  config = { ...loaded, apiKeys: TEST_KEYS, sandbox: { ...loaded.sandbox, workers: 1, maxConcurrentCalls: 1, maxQueuedCalls: 0 } };
  system = await startToolSystem({ config, log: createLogger('silent'), env: {} });
  ({ url } = await serve(depsFor(system)));
});

afterAll(async () => {
  for (const close of onClose) await close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await system.close();
  await rm(base, { recursive: true, force: true });
});

interface Connected {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  /** Resolves when the session's GET stream (server-to-client notifications) has opened. */
  readonly notificationsOpen: Promise<void>;
}

/** The SDK client over a real socket with a bearer key, once its GET stream is open (`holdGet` delays that). */
async function connect(options: { key?: string; to?: URL; holdGet?: Promise<unknown> } = {}): Promise<Connected> {
  let opened!: () => void;
  const notificationsOpen = new Promise<void>((resolve) => { opened = resolve; });
  const watchingFetch: FetchLike = async (input, init) => {
    const isGet = (init?.method ?? 'GET') === 'GET';
    if (isGet) await options.holdGet;
    const response = await fetch(input, init);
    if (isGet && response.ok) opened();
    return response;
  };
  const transport = new StreamableHTTPClientTransport(options.to ?? url, {
    requestInit: { headers: bearer(options.key ?? INVOKE_KEY) },
    fetch: watchingFetch,
  });
  const client = new Client({ name: 'paddock-test', version: '1.0.0' });
  await client.connect(transport);
  onTestFinished(() => client.close());
  // Every request of the handshake has reached the server once the GET stream is open (tests that
  // move the session clock rely on it), unless the test holds that stream back on purpose.
  if (options.holdGet === undefined) await notificationsOpen;
  return { client, transport, notificationsOpen };
}

/** Status of a raw JSON-RPC ping in a session: 200 while it lives, 404 once it is gone. */
let pingId = 0;
async function ping(sessionId: string | undefined, key = INVOKE_KEY, to = url): Promise<number> {
  const response = await fetch(to, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }) },
    // Ids are unique in a session (the SDK client's own count from 0): a reused id would take over the other request's cancellation.
    body: JSON.stringify({ jsonrpc: '2.0', id: `ping-${++pingId}`, method: 'ping' }),
  });
  await response.body?.cancel();
  return response.status;
}

/**
 * A POST on a connection of its own: the server answers 413 without reading the body and then
 * closes that connection, which must not be one fetch's pool would hand to the next test.
 */
function postOnOwnConnection(to: URL, headers: Record<string, string>, body: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const request = http.request(to, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => { chunks.push(chunk); });
      response.once('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
        resolve(new Response(Buffer.concat(chunks), { status: response.statusCode ?? 0, headers: responseHeaders }));
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

const initializeRequest = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

/** Something that happens once: the test awaits `promise`, a handler calls `resolve`. */
function event(): { readonly promise: Promise<unknown>; readonly resolve: () => void } {
  const { promise, resolve } = Promise.withResolvers();
  return { promise, resolve: () => { resolve(undefined); } };
}

async function expectCallsDrained(since: number, withinMs: number): Promise<void> {
  await vi.waitFor(() => { expect(system.coordinator.limiter.running).toBe(0); }, { timeout: 5000, interval: 5 });
  expect(performance.now() - since).toBeLessThan(withinMs);
}

describe('initialize and tools/list', () => {
  it('opens a session that offers tools with list_changed', async () => {
    const { client, transport } = await connect();
    expect(client.getServerVersion()).toEqual({ name: 'paddock', version: '0.0.0-test' });
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('lists exactly the registry that GET /v1/tools lists, parameters as the input schema', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    const overHttp = await fetch(new URL('/v1/tools', url), { headers: bearer(INVOKE_KEY) });
    expect(overHttp.status).toBe(200);
    const listed = (await overHttp.json() as { tools: { name: string; parameters: unknown }[] }).tools;
    expect(tools.map((tool) => tool.name)).toEqual(listed.map((tool) => tool.name));
    expect(listed.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'fail', 'steps', 'slow']));
    const echo = tools.find((tool) => tool.name === 'echo');
    expect(echo).toMatchObject({
      description: 'Test tool echo.',
      inputSchema: listed.find((tool) => tool.name === 'echo')?.parameters,
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
      _meta: { 'paddock/kind': 'read', 'paddock/source': 'user' },
    });
  });
});

describe('tools/call', () => {
  it('runs a tool through the coordinator and returns its content', async () => {
    const { client } = await connect();
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hello over MCP' } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'hello over MCP' }] });
    expect(result.isError).toBeUndefined();
    expect(result._meta?.['paddock/callId']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('returns a thrown error as an isError result with the message as text', async () => {
    const { client } = await connect();
    const result = await client.callTool({ name: 'fail', arguments: {} });
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'the tool broke on purpose' }],
      _meta: { 'paddock/error': { kind: 'tool_error' } },
    });
  });

  it('returns arguments that break the schema as an isError result naming every violation', async () => {
    const { client } = await connect();
    const result = await client.callTool({ name: 'echo', arguments: { text: 5, extra: true } });
    expect(result.isError).toBe(true);
    const text = (result.content as { text: string }[])[0]?.text;
    expect(text).toMatch(/^Invalid parameters for "echo": /);
    expect(text).toContain('/text must be string');
    expect(text).toContain('/extra is not an allowed property');
    expect(system.coordinator.limiter.running).toBe(0);
  });

  it('answers an unknown tool with a JSON-RPC invalid-params error', async () => {
    const { client } = await connect();
    const attempt = client.callTool({ name: 'no_such_tool', arguments: {} });
    await expect(attempt).rejects.toBeInstanceOf(McpError);
    await expect(attempt).rejects.toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining('There is no tool named "no_such_tool"') });
  });

  it('refuses malformed grants in _meta as invalid params (they can only narrow)', async () => {
    const { client } = await connect();
    await expect(client.callTool({ name: 'echo', arguments: { text: 'x' }, _meta: { 'paddock/grants': { net: 5 } } }))
      .rejects.toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining('Invalid grants') });
  });

  it('streams ctx.update as progress notifications when the client sent a progress token', async () => {
    const { client } = await connect();
    const progress: unknown[] = [];
    const result = await client.callTool({ name: 'steps', arguments: {} }, undefined, { onprogress: (update) => { progress.push(update); } });
    expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(progress).toEqual([
      { progress: 1, message: 'step 1' },
      { progress: 2, message: 'step 2' },
      { progress: 3, message: 'step 3' },
    ]);
  });

  it('refuses a call beyond the concurrency bound with the overloaded code', async () => {
    const { client } = await connect();
    const controller = new AbortController();
    const started = event();
    const slow = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal, onprogress: () => { started.resolve(); } });
    slow.catch(() => undefined);
    await started.promise;
    await expect(client.callTool({ name: 'echo', arguments: { text: 'x' } }))
      .rejects.toMatchObject({ code: OVERLOADED_ERROR_CODE, data: { retryAfterSeconds: 1 } });
    controller.abort();
    await expectCallsDrained(performance.now(), 3000);
  });
});

describe('cancellation', () => {
  it('notifications/cancelled aborts the running call quickly', async () => {
    const { client } = await connect();
    const controller = new AbortController();
    const started = event();
    const call = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal, onprogress: () => { started.resolve(); } });
    await started.promise;
    expect(system.coordinator.limiter.running).toBe(1);
    const abortedAt = performance.now();
    controller.abort(new Error('user pressed stop'));
    await expect(call).rejects.toThrow('user pressed stop');
    await expectCallsDrained(abortedAt, 2000);
    // The session goes on: the cancelled call released its slot and its stream.
    expect(await client.callTool({ name: 'echo', arguments: { text: 'after' } })).toMatchObject({ content: [{ text: 'after' }] });
  });

  it('a client dropping the HTTP request aborts the call (its answer could never be delivered)', async () => {
    const { transport } = await connect();
    const controller = new AbortController();
    const response = await fetch(url, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        ...bearer(INVOKE_KEY), 'content-type': 'application/json', accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId ?? '', 'mcp-protocol-version': transport.protocolVersion ?? '',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: {}, _meta: { progressToken: 'p' } } }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = '';
    while (!seen.includes('"message":"started"')) seen += (await reader.read()).value ?? '';
    const abortedAt = performance.now();
    controller.abort();
    await expectCallsDrained(abortedAt, 2000);
  });
});

describe('tools/list_changed', () => {
  it('reaches an open session after a new tool file is written to the folder', async () => {
    const { client, notificationsOpen } = await connect();
    const changed = event();
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed.resolve(); });
    await notificationsOpen;
    await writeFile(path.join(toolsDir, 'added.ts'), toolSource('added', 'return "new";'));
    await changed.promise;
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('added');
    expect(await client.callTool({ name: 'added', arguments: {} })).toMatchObject({ content: [{ text: 'new' }] });
  });

  it('is sent when a GET stream opens after a change the session has not listed', async () => {
    const release = event();
    const { client, notificationsOpen } = await connect({ holdGet: release.promise });
    const changed = event();
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed.resolve(); });
    await client.listTools();
    await system.loader.writeTool('late', toolSource('late', 'return "late";'));
    release.resolve();
    await notificationsOpen;
    await changed.promise;
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('late');
  });
});

describe('HTTP surface', () => {
  it('answers 401 problem+json without a key, and with an unknown one', async () => {
    const missing = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await expectProblem(missing, {
      status: 401, type: 'unauthorized', title: 'Unauthorized', instance: '/mcp',
      detail: 'Missing Authorization header; send "Authorization: Bearer <key>".',
    });
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="paddock"');
    const unknown = await fetch(url, { headers: bearer('pdk_not-a-key-000000000000') });
    await expectProblem(unknown, { status: 401, type: 'unauthorized', title: 'Unauthorized', instance: '/mcp', detail: 'The bearer key is malformed or unknown.' });
  });

  it('answers 413 problem+json for a body over the limit, before the transport reads it', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(config.http.maxBodyBytes) } });
    const response = await postOnOwnConnection(url, { ...bearer(INVOKE_KEY), 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body);
    await expectProblem(response, {
      status: 413, type: 'payload-too-large', title: 'Payload too large', instance: '/mcp',
      detail: `The request body exceeds the limit of ${config.http.maxBodyBytes} bytes.`,
    });
  });

  it('answers 405 problem+json for other methods', async () => {
    const response = await fetch(url, { method: 'PUT', headers: bearer(INVOKE_KEY) });
    await expectProblem(response, {
      status: 405, type: 'method-not-allowed', title: 'Method not allowed', instance: '/mcp',
      detail: 'PUT is not served on /mcp; use POST, GET or DELETE.',
    });
    expect(response.headers.get('allow')).toBe('GET, POST, DELETE');
  });

  it('answers 503 problem+json when the service runs without a tool system', async () => {
    const { url: bare } = await serve(depsFor(undefined));
    const response = await fetch(bare, { method: 'POST', headers: { ...bearer(INVOKE_KEY), 'content-type': 'application/json' }, body: '{}' });
    await expectProblem(response, {
      status: 503, type: 'unavailable', title: 'Service unavailable', instance: '/mcp',
      detail: 'The tool system is not running, so MCP is unavailable.',
    });
  });
});

describe('sessions', () => {
  it('are owned by their caller, need an id after initialize, and end with DELETE', async () => {
    const { transport } = await connect();
    expect(await ping(transport.sessionId)).toBe(200);
    expect(await ping(transport.sessionId, ADMIN_KEY)).toBe(404);
    expect(await ping(undefined)).toBe(400);
    expect(await ping('00000000-0000-0000-0000-000000000000')).toBe(404);
    const id = transport.sessionId;
    await transport.terminateSession();
    expect(await ping(id)).toBe(404);
  });

  it('are bounded per caller and service-wide: the least recently active idle one makes room', async () => {
    let clock = 0;
    const { url: bounded, sessions } = await serve(depsFor(system), { sessions: { maxSessions: 3, maxSessionsPerCaller: 2, now: () => clock } });
    const ci1 = await connect({ to: bounded });
    clock = 10;
    const ci2 = await connect({ to: bounded });
    clock = 20;
    const ci3 = await connect({ to: bounded }); // ci's third: its least recent (ci1) goes
    expect(await ping(ci1.transport.sessionId, INVOKE_KEY, bounded)).toBe(404);
    clock = 30;
    expect(await ping(ci3.transport.sessionId, INVOKE_KEY, bounded)).toBe(200); // ci3 is now more recent than ci2
    clock = 40;
    await connect({ key: ADMIN_KEY, to: bounded }); // the service's third
    clock = 50;
    const op2 = await connect({ key: ADMIN_KEY, to: bounded }); // the service's fourth: ci2, least recent, goes
    expect(await ping(ci2.transport.sessionId, INVOKE_KEY, bounded)).toBe(404);
    expect(await ping(ci3.transport.sessionId, INVOKE_KEY, bounded)).toBe(200);
    expect(await ping(op2.transport.sessionId, ADMIN_KEY, bounded)).toBe(200);
    expect(sessions?.size).toBe(3);
  });

  it('refuse a new session with 429 when every session of the caller is running a call', async () => {
    const { url: bounded } = await serve(depsFor(system), { sessions: { maxSessionsPerCaller: 1 } });
    const { client } = await connect({ to: bounded });
    const controller = new AbortController();
    const started = event();
    const slow = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal, onprogress: () => { started.resolve(); } });
    slow.catch(() => undefined);
    await started.promise;
    const response = await fetch(bounded, {
      method: 'POST',
      headers: { ...bearer(INVOKE_KEY), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initializeRequest),
    });
    await expectProblem(response, {
      status: 429, type: 'overloaded', title: 'Too many requests', instance: '/mcp',
      detail: 'Too many open MCP sessions (the per-caller limit) and every one is running a call; close one (DELETE /mcp) or retry shortly.',
    });
    expect(response.headers.get('retry-after')).toBe('5');
    controller.abort();
    await expectCallsDrained(performance.now(), 3000);
  });

  it('expire when idle (no request, no call, no open GET stream), and closing one aborts its running call', async () => {
    let clock = 0;
    const { url: expiring, sessions } = await serve(depsFor(system), { sessions: { idleTimeoutMs: 1000, now: () => clock } });
    const neverListens = event();
    onTestFinished(() => { neverListens.resolve(); });
    const silent = await connect({ to: expiring, holdGet: neverListens.promise });
    const listening = await connect({ to: expiring });
    const busy = await connect({ to: expiring, holdGet: neverListens.promise });
    const started = event();
    busy.client.callTool({ name: 'slow', arguments: {} }, undefined, { onprogress: () => { started.resolve(); } }).catch(() => undefined);
    await started.promise;
    clock = 5000;
    expect(await ping(silent.transport.sessionId, INVOKE_KEY, expiring)).toBe(404); // swept on this request
    expect(await ping(listening.transport.sessionId, INVOKE_KEY, expiring)).toBe(200); // its GET stream is open
    expect(await ping(busy.transport.sessionId, INVOKE_KEY, expiring)).toBe(200); // a running call keeps it
    const closedAt = performance.now();
    await sessions?.close();
    await expectCallsDrained(closedAt, 2000);
  });

  it('close when the service drains, so their open streams do not hold the shutdown', async () => {
    let draining = false;
    const { url: drainingUrl, sessions } = await serve({ ...depsFor(system), isDraining: () => draining });
    const { transport } = await connect({ to: drainingUrl });
    expect(sessions?.size).toBe(1);
    draining = true;
    expect(await ping(transport.sessionId, INVOKE_KEY, drainingUrl)).toBe(404);
    expect(sessions?.size).toBe(0);
    const response = await fetch(drainingUrl, {
      method: 'POST',
      headers: { ...bearer(INVOKE_KEY), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initializeRequest),
    });
    await expectProblem(response, {
      status: 503, type: 'unavailable', title: 'Service unavailable', instance: '/mcp',
      detail: 'The service is shutting down; no new MCP sessions are opened.',
    });
  });
});
