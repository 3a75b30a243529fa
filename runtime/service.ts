import { mkdir, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { KeyStore, loadOrCreateGeneratedKey } from './auth/keys.ts';
import type { Config } from './config/schema.ts';
import { freezeConfig } from './config/load.ts';
import { createApp } from './http/app.ts';
import { listen } from './http/listen.ts';
import type { Logger } from './observability/logger.ts';
import { createMetrics } from './observability/metrics.ts';
import { PADDOCK_VERSION } from './version.ts';
import { startToolSystem } from './coordinator/tool-system.ts';
import type { ToolSystem } from './coordinator/tool-system.ts';
import { builtinTools } from './tools/builtins/index.ts';
import type { McpSessions } from './mcp/sessions.ts';
import { openAgentRuntime } from './sessions/agent-runtime.ts';
import type { AgentRuntime } from './sessions/agent-runtime.ts';
import type { SessionService } from './sessions/session-service.ts';

/** A start-up problem the operator must fix; the CLI prints its message as one line and exits 1. */
export class StartupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

export interface RunningService {
  /** Base URL the service answers on, e.g. http://127.0.0.1:8787 */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish within `graceMs`, then closes what is left. */
  shutdown(graceMs?: number): Promise<{ forced: boolean }>;
}

export interface ServiceOptions {
  /** The service environment, for `{ "env": NAME }` secret references only. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Start without the tool system (sandbox workers): the HTTP shell only. @defaultValue true */
  tools?: boolean;
}

export async function startService(given: Config, log: Logger, options: ServiceOptions = {}): Promise<RunningService> {
  const config = freezeConfig(given);
  await ensureWritableDataDir(config.dataDir);
  const keys = await resolveKeys(config, log);
  const metrics = createMetrics();
  let tools: ToolSystem | undefined;
  let sessions: SessionService | undefined;
  if (options.tools !== false) {
    let agent: AgentRuntime | undefined;
    try {
      await mkdir(config.workspaceDir, { recursive: true, mode: 0o700 });
      agent = openAgentRuntime({ config, log });
      tools = await startToolSystem({ config, log, env: options.env ?? {}, builtins: [...builtinTools(), ...agent.builtins], metrics });
      sessions = agent.start(tools);
    } catch (error) {
      agent?.abandon();
      await tools?.close();
      throw new StartupError(`the tool system could not start: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
  let draining = false;
  let mcpSessions: McpSessions | undefined;
  const app = createApp({
    config, log, metrics, keys, version: PADDOCK_VERSION, tools, sessions, isDraining: () => draining,
    mcp: { onSessions: (sessions) => { mcpSessions = sessions; } },
  });

  const server = await listenOrExplain(app.fetch, config);
  const responses = trackResponses(server, () => draining);
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  log.info({ url, dataDir: config.dataDir, toolsDir: config.toolsDir, version: PADDOCK_VERSION }, 'paddock listening');

  return {
    url,
    port: address.port,
    async shutdown(graceMs = config.http.shutdownGraceMs) {
      draining = true;
      // Open MCP streams would otherwise hold the listener open for the whole grace period.
      const mcpClosed = mcpSessions?.close();
      const closed = new Promise<void>((resolve) => server.close(() => { resolve(); }));
      // Logged once the listener is closed, so the line is true when read (tests rely on it).
      log.info({ graceMs }, 'shutting down: no new connections; waiting for in-flight requests');
      // Idle keep-alive sockets would hold close() open for nothing, and so would the sockets of
      // requests in flight once their responses are done.
      server.closeIdleConnections();
      for (const response of responses) closeConnectionAfter(response, server);
      let forced = false;
      const timer = setTimeout(() => {
        forced = true;
        log.warn({ graceMs }, 'grace period over: closing the remaining connections');
        server.closeAllConnections();
      }, graceMs);
      await closed;
      clearTimeout(timer);
      await mcpClosed;
      await sessions?.close(); // cancels running turns (their tools too) and closes the store
      await tools?.close();
      log.info({ forced }, 'shut down');
      return { forced };
    },
  };
}

/**
 * Responses not yet done, so that a shutdown can close their connections after them. While draining,
 * a request that still arrives on a kept-alive connection is answered with `Connection: close`.
 */
function trackResponses(server: Server, isDraining: () => boolean): Set<ServerResponse> {
  const open = new Set<ServerResponse>();
  // Before the app's listener, so the header can still be set whatever the app does next.
  server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
    if (isDraining()) response.setHeader('connection', 'close');
    open.add(response);
    response.once('close', () => { open.delete(response); });
  });
  return open;
}

/** Without this a keep-alive connection outlives its response and holds close() open until the grace period ends. */
function closeConnectionAfter(response: ServerResponse, server: Server): void {
  if (!response.headersSent) response.setHeader('connection', 'close');
  else response.once('finish', () => { server.closeIdleConnections(); }); // after Node detaches the socket: idle now
}

async function resolveKeys(config: Config, log: Logger): Promise<KeyStore> {
  if (config.apiKeys.length > 0) return new KeyStore(config.apiKeys);
  if (!isLoopback(config.host)) {
    throw new StartupError(
      `refusing to listen on ${config.host} without configured API keys: set PADDOCK_API_KEYS or "apiKeys" in the config file, or listen on 127.0.0.1`,
    );
  }
  try {
    const generated = await loadOrCreateGeneratedKey(config.dataDir);
    // The file's path, never the key: logs are shipped and kept where keys must not be.
    log.info({ keyFile: generated.file, created: generated.created }, generated.created
      ? 'no API key configured: created one (scope admin); read it from the key file'
      : 'no API key configured: using the key in the key file');
    return new KeyStore([generated.key]);
  } catch (error) {
    throw new StartupError((error as Error).message, { cause: error });
  }
}

async function ensureWritableDataDir(dataDir: string): Promise<void> {
  const probe = path.join(dataDir, `.write-probe-${process.pid}`);
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await writeFile(probe, '');
    await rm(probe);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new StartupError(`the data folder ${dataDir} is not writable (${code}); set PADDOCK_DATA or "dataDir" to a folder this user can write`, { cause: error });
  }
}

async function listenOrExplain(fetch: (request: Request) => Response | Promise<Response>, config: Config): Promise<Server> {
  try {
    return await listen(fetch, { host: config.host, port: config.port, headersTimeoutMs: config.http.headersTimeoutMs });
  } catch (caught) {
    const error = caught as NodeJS.ErrnoException;
    const where = `${config.host}:${config.port}`;
    const reason = error.code === 'EADDRINUSE' ? 'the address is already in use'
      : error.code === 'EACCES' ? 'permission denied'
      : error.code === 'EADDRNOTAVAIL' ? 'the address is not available on this machine'
      : error.code === 'ENOTFOUND' ? 'the host name does not resolve'
      : error.code ?? error.message;
    throw new StartupError(`cannot listen on ${where}: ${reason}`, { cause: error });
  }
}

export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./i.test(bare);
  return false;
}
