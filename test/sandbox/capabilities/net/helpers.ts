/**
 * Real loopback servers and a Deno-like grant for the net capability tests. Servers listen on
 * 127.0.0.1 or ::1 only, record what reached them, and expose events (request arrived, socket
 * closed) so tests wait on those instead of sleeping.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { GuestError } from '../../../../sandbox/errors.ts';
import { parseIpAddress } from '../../../../sandbox/capabilities/net/address.ts';
import { DEFAULT_FETCH_LIMITS } from '../../../../sandbox/capabilities/net/fetch.ts';
import type { FetchLimits, GuardedFetchOptions } from '../../../../sandbox/capabilities/net/fetch.ts';
import type { FetchArgs } from '../../../../sandbox/protocol.ts';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
  servername: string | false | undefined;
}

export type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

export interface TestServer {
  readonly host: '127.0.0.1' | '::1';
  readonly port: number;
  /** `http://127.0.0.1:PORT` (or https, or `[::1]`), no trailing slash. */
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Resolves with the next request's head as soon as it arrives (before its handler answers). */
  nextRequest(): Promise<IncomingMessage>;
  close(): Promise<void>;
}

const FIXTURES = new URL('./fixtures/', import.meta.url);
export const TEST_CA = readFileSync(new URL('ca.pem', FIXTURES), 'utf8');
const TLS_IDENTITY = {
  cert: readFileSync(new URL('server-cert.pem', FIXTURES), 'utf8'),
  key: readFileSync(new URL('server-key.pem', FIXTURES), 'utf8'),
};

export async function startServer(
  handler: Handler,
  options: { host?: '127.0.0.1' | '::1'; port?: number; tls?: boolean } = {},
): Promise<TestServer> {
  const host = options.host ?? '127.0.0.1';
  const requests: RecordedRequest[] = [];
  const waiters: ((request: IncomingMessage) => void)[] = [];
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    waiters.shift()?.(request);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const socket = request.socket as Socket & { servername?: string | false };
      requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        rawHeaders: request.rawHeaders,
        body,
        servername: socket.servername,
      });
      handler(request, response, body);
    });
  };
  const server = options.tls === true ? createTlsServer(TLS_IDENTITY, listener) : createServer(listener);
  server.listen(options.port ?? 0, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const scheme = options.tls === true ? 'https' : 'http';
  return {
    host,
    port,
    origin: `${scheme}://${host === '::1' ? '[::1]' : host}:${port}`,
    requests,
    nextRequest: () => new Promise((resolve) => waiters.push(resolve)),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/**
 * Resolves when the socket has closed, however it ended. (events.once would reject on the
 * ECONNRESET a server sees when the client tears the connection down, which is the point here.)
 */
export function socketClosed(socket: Socket): Promise<void> {
  if (socket.closed) return Promise.resolve();
  return new Promise((resolve) => {
    socket.once('close', () => {
      resolve();
    });
  });
}

/** A port that was just listening and is now closed: connections to it are refused. */
export async function closedPort(): Promise<number> {
  const server = await startServer(() => undefined);
  await server.close();
  return server.port;
}

/**
 * A grant in Deno's `--allow-net` syntax (`host`, `host:port`, `[v6]:port`), checked as Deno does;
 * an entry whose host is an IP address is a literal grant for that address.
 */
export function netGrant(entries: readonly string[]): Pick<GuardedFetchOptions, 'authorize' | 'literalAddressGranted'> {
  const parsed = entries.map((entry) => {
    const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
    if (match === null) throw new Error(`bad grant entry ${entry}`);
    return { host: match[1] ?? '', port: match[2] === undefined ? undefined : Number(match[2]) };
  });
  const portMatches = (granted: number | undefined, port: number) => granted === undefined || granted === port;
  return {
    authorize(hostname, port) {
      if (!parsed.some((entry) => entry.host === hostname && portMatches(entry.port, port))) {
        throw new GuestError('NotCapable', `Requires net access to "${hostname}:${port}", run again with the --allow-net flag`);
      }
    },
    literalAddressGranted(ip, port) {
      return parsed.some(
        (entry) => parseIpAddress(entry.host)?.address === parseIpAddress(ip)?.address && portMatches(entry.port, port),
      );
    },
  };
}

export interface AuditEntry {
  target: string;
  allowed: boolean;
  reason?: string | undefined;
}

export function fetchOptions(
  grant: readonly string[],
  overrides: Partial<Omit<GuardedFetchOptions, 'limits'>> & { limits?: Partial<FetchLimits> } = {},
): GuardedFetchOptions & { audit: AuditEntry[] } {
  const audit: AuditEntry[] = [];
  const { limits, ...rest } = overrides;
  return {
    ...netGrant(grant),
    onAudit: (target, allowed, reason) => audit.push(reason === undefined ? { target, allowed } : { target, allowed, reason }),
    signal: new AbortController().signal,
    ...rest,
    limits: { ...DEFAULT_FETCH_LIMITS, timeoutMs: 5_000, ...limits },
    audit,
  };
}

export function get(url: string, init: Partial<FetchArgs> = {}): FetchArgs {
  return { url, method: 'GET', headers: [], body: null, redirect: 'follow', ...init };
}

export function text(body: Uint8Array): string {
  return Buffer.from(body).toString('utf8');
}

/** The GuestError a promise rejects with, as the guest would see it. */
export async function guestErrorOf(promise: Promise<unknown>): Promise<{ name: string; message: string; cause?: { name: string; message: string } }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GuestError) {
      return { name: error.guestName, message: error.message, ...(error.guestCause === undefined ? {} : { cause: error.guestCause }) };
    }
    throw error;
  }
  throw new Error('expected the fetch to fail');
}
