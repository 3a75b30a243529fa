import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Caller } from '../auth/keys.ts';
import type { ToolSystem } from '../coordinator/tool-system.ts';
import type { Logger } from '../observability/logger.ts';
import { authInfoFor } from './request-context.ts';
import { createToolServer } from './tool-server.ts';
import type { ToolServer } from './tool-server.ts';

/** No room for another session: every open one is busy with a call. The caller may retry later. */
export class McpSessionLimitError extends Error {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.name = new.target.name;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The service is shutting down (or the manager was closed): no new sessions. */
export class McpUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export interface McpSessionsOptions {
  readonly version: string;
  readonly log: Logger;
  /** Largest POST body the transport reads (the HTTP layer's limit applies first). */
  readonly maxBodyBytes: number;
  /** Open sessions, service-wide. At the bound, the least recently active idle session is closed. @defaultValue 100 */
  readonly maxSessions?: number;
  /** Open sessions per caller (API key), so one key cannot push every other client out. @defaultValue 16 */
  readonly maxSessionsPerCaller?: number;
  /** A session with no request, no running call and no open GET stream for this long is closed. @defaultValue 30 minutes */
  readonly idleTimeoutMs?: number;
  /** True once the service drains: sessions close so their open streams do not hold the shutdown. */
  readonly isDraining?: () => boolean;
  /** The clock, for tests. @defaultValue performance.now */
  readonly now?: () => number;
  /** How often idle sessions are looked for and draining is checked. @defaultValue 1000 */
  readonly sweepIntervalMs?: number;
}

interface Session {
  /** Set when the transport accepts the initialize request. */
  id: string;
  /** Only the caller that opened a session may use it; to anyone else it does not exist. */
  readonly owner: string;
  readonly server: ToolServer;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  lastActive: number;
  activeCalls: number;
  /** Open GET streams: a client listening for notifications is alive, even when it sends nothing. */
  openStreams: number;
  /** The registry generation of the last tools/list answer (or of the start). */
  listedGeneration: number;
}

const SESSION_ID_HEADER = 'mcp-session-id';

/**
 * Stateful Streamable HTTP sessions: one SDK server and transport per session, kept in memory,
 * bounded in number (globally and per caller) and closed when idle. A session's GET stream
 * carries notifications/tools/list_changed; closing a session aborts its running calls.
 */
export class McpSessions {
  readonly #tools: ToolSystem;
  readonly #options: McpSessionsOptions;
  readonly #maxSessions: number;
  readonly #maxPerCaller: number;
  readonly #idleTimeoutMs: number;
  readonly #now: () => number;
  readonly #sessions = new Map<string, Session>();
  readonly #unsubscribe: () => void;
  readonly #sweeper: NodeJS.Timeout;
  /** Initialize requests in progress, counted against the bounds before their session exists. */
  #opening = 0;
  #closed = false;

  constructor(tools: ToolSystem, options: McpSessionsOptions) {
    this.#tools = tools;
    this.#options = options;
    this.#maxSessions = options.maxSessions ?? 100;
    this.#maxPerCaller = Math.min(options.maxSessionsPerCaller ?? 16, this.#maxSessions);
    this.#idleTimeoutMs = options.idleTimeoutMs ?? 30 * 60_000;
    this.#now = options.now ?? (() => performance.now());
    this.#unsubscribe = tools.subscribe(() => { this.#announceListChanged(); });
    this.#sweeper = setInterval(() => { this.#sweep(); }, options.sweepIntervalMs ?? 1000);
    this.#sweeper.unref();
  }

  /** Open sessions. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Serves one HTTP request to the MCP endpoint (POST, GET or DELETE) for an authenticated caller.
   * Transport-level refusals (no or unknown session, bad Accept, malformed JSON-RPC) are answered
   * as the SDK answers them: JSON-RPC error bodies with the status the MCP spec gives.
   * @throws McpSessionLimitError when a new session has no room; McpUnavailableError while draining.
   */
  async handle(request: Request, caller: Caller): Promise<Response> {
    this.#sweep();
    const sessionId = request.headers.get(SESSION_ID_HEADER);
    const authInfo = authInfoFor({ caller, signal: request.signal });
    if (sessionId === null) {
      if (request.method !== 'POST') return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return this.#open(request, caller, authInfo);
    }
    const session = this.#sessions.get(sessionId);
    if (session?.owner !== caller.name) return jsonRpcError(404, -32001, 'Session not found');
    session.lastActive = this.#now();
    const response = await session.transport.handleRequest(request, { authInfo });
    if (request.method === 'GET' && response.ok) this.#attachStream(session, request.signal);
    return response;
  }

  /** Closes every session (their streams end and their running calls are aborted) and stops. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#sweeper);
    this.#unsubscribe();
    await Promise.all([...this.#sessions.values()].map((session) => this.#end(session)));
  }

  async #open(request: Request, caller: Caller, authInfo: ReturnType<typeof authInfoFor>): Promise<Response> {
    this.#assertAccepting();
    this.#makeRoom(caller);
    this.#opening++;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.#options.maxBodyBytes,
    });
    const session = this.#createSession(caller, transport);
    try {
      const response = await transport.handleRequest(request, { authInfo });
      // Anything but a valid initialize request leaves the transport without a session: drop it.
      // The client learns the id from this response, so registering now is in time for its next request.
      // A session initialized while close() ran would outlive it: end it too.
      if (transport.sessionId === undefined || this.#closed) await this.#end(session);
      else {
        session.id = transport.sessionId;
        this.#sessions.set(session.id, session);
      }
      return response;
    } finally {
      this.#opening--;
    }
  }

  #assertAccepting(): void {
    if (this.#closed || this.#options.isDraining?.() === true) throw new McpUnavailableError('The service is shutting down; no new MCP sessions are opened.');
  }

  #createSession(caller: Caller, transport: WebStandardStreamableHTTPServerTransport): Session {
    // The server's hooks run only once requests arrive, after `session` below exists.
    const server = createToolServer(this.#tools, {
      version: this.#options.version,
      log: this.#options.log,
      onCallStart: () => {
        session.activeCalls++;
        return () => {
          session.activeCalls--;
          session.lastActive = this.#now();
        };
      },
      onList: (generation) => { session.listedGeneration = generation; },
      onCancelled: (requestId) => { transport.closeSSEStream(requestId); },
    });
    const session: Session = {
      id: '', owner: caller.name, server, transport,
      lastActive: this.#now(), activeCalls: 0, openStreams: 0, listedGeneration: this.#tools.registry.generation,
    };
    server.onclose = () => {
      if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id);
    };
    server.onerror = (error) => { this.#options.log.debug({ err: error, mcpSession: session.id }, 'MCP transport error'); };
    // connect() only wires callbacks and starts the transport (a no-op for Streamable HTTP).
    void server.connect(transport).catch((error: unknown) => { this.#options.log.error({ err: error }, 'MCP server failed to connect'); });
    return session;
  }

  /** Closes idle sessions (least recently active first) until `caller` may open one more. */
  #makeRoom(caller: Caller): void {
    const open = [...this.#sessions.values()];
    const mine = open.filter((session) => session.owner === caller.name);
    if (mine.length + 1 > this.#maxPerCaller) this.#evictIdle(mine, mine.length + 1 - this.#maxPerCaller, 'per-caller');
    const total = this.#sessions.size + this.#opening;
    if (total + 1 > this.#maxSessions) this.#evictIdle([...this.#sessions.values()], total + 1 - this.#maxSessions, 'service');
  }

  #evictIdle(candidates: Session[], count: number, bound: string): void {
    const idle = candidates.filter((session) => session.activeCalls === 0).sort((a, b) => a.lastActive - b.lastActive);
    if (idle.length < count) {
      throw new McpSessionLimitError(`Too many open MCP sessions (the ${bound} limit) and every one is running a call; close one (DELETE /mcp) or retry shortly.`, 5);
    }
    for (const session of idle.slice(0, count)) {
      this.#options.log.info({ mcpSession: session.id, caller: session.owner, bound }, 'MCP session closed to make room');
      void this.#end(session);
    }
  }

  #sweep(): void {
    if (this.#closed) return;
    if (this.#options.isDraining?.() === true) {
      void this.close();
      return;
    }
    const now = this.#now();
    for (const session of this.#sessions.values()) {
      if (session.activeCalls === 0 && session.openStreams === 0 && now - session.lastActive >= this.#idleTimeoutMs) {
        this.#options.log.info({ mcpSession: session.id, caller: session.owner }, 'MCP session expired');
        void this.#end(session);
      }
    }
  }

  /** Removes the session at once (a later request gets 404) and closes its transport; never rejects. */
  async #end(session: Session): Promise<void> {
    if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id);
    try {
      await session.server.close();
    } catch (error) {
      this.#options.log.warn({ err: error, mcpSession: session.id }, 'MCP session did not close cleanly');
    }
  }

  #announceListChanged(): void {
    for (const session of this.#sessions.values()) this.#notify(session);
  }

  /**
   * A GET stream just opened. It counts as activity until the client drops it (the request's
   * signal aborts then; a stream the server ends belongs to a session that is gone anyway). A
   * change the session has not listed since, and no stream could carry, is announced on it now.
   */
  #attachStream(session: Session, signal: AbortSignal): void {
    if (signal.aborted) return;
    session.openStreams++;
    signal.addEventListener('abort', () => {
      session.openStreams--;
      session.lastActive = this.#now();
    }, { once: true });
    if (session.listedGeneration !== this.#tools.registry.generation) this.#notify(session);
  }

  #notify(session: Session): void {
    session.server.sendToolListChanged().catch((error: unknown) => {
      this.#options.log.debug({ err: error, mcpSession: session.id }, 'tools/list_changed not delivered');
    });
  }
}

/** A transport-level refusal, shaped as the SDK's transport shapes its own. */
function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status, headers: { 'content-type': 'application/json' },
  });
}
