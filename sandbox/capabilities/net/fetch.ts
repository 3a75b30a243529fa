/**
 * The host side of the guest's `fetch`. Guest code chooses the URL, so every hop is treated as an
 * SSRF attempt: grant check on host:port, one DNS resolution, every resolved address classified
 * (non-public ones need a literal grant), the socket pinned to the checked addresses, redirects
 * followed by hand and checked again, and bytes and time capped. Only GuestErrors with vetted
 * messages leave this module for failures of the request itself.
 */
import type { Client, Dispatcher } from 'undici';
import { GuestError } from '../../errors.ts';
import type { FetchArgs, FetchResult, HttpHeaders } from '../../protocol.ts';
import type { ParsedAddress } from './address.ts';
import { Interrupted, admit } from './admit.ts';
import type { ResolveHost } from './admit.ts';
import { abortError, requestTooLarge, responseTooLarge, timeoutError, transportError } from './fetch-errors.ts';
import { createPinnedClient } from './pinned-client.ts';
import { BodyDecodeFailed, BodyLimitExceeded, readCappedBody } from './read-body.ts';
import { nextHop } from './redirect.ts';
import type { HopRequest } from './redirect.ts';
import { prepareRequestHeaders, withUrlCredentials } from './request-headers.ts';
import { hopTarget, parseFetchUrl } from './target.ts';
import { canonicalReason } from './reason-phrases.ts';

export type { ResolveHost } from './admit.ts';

export interface FetchLimits {
  /** Largest response body, counted both on the wire and decoded. */
  readonly maxResponseBytes: number;
  /** Wall-clock budget for the whole fetch: DNS, every hop, and reading the body. */
  readonly timeoutMs: number;
  /** Redirects followed before failing, as fetch's 20. */
  readonly maxRedirects: number;
  /** Largest request: header names and values plus body. */
  readonly maxRequestBytes: number;
}

export const DEFAULT_FETCH_LIMITS: FetchLimits = Object.freeze({
  maxResponseBytes: 10 * 1024 * 1024,
  timeoutMs: 30_000,
  maxRedirects: 20,
  maxRequestBytes: 10 * 1024 * 1024,
});

export interface GuardedFetchOptions {
  /** Throws the NotCapable GuestError (Deno's message) when the grant does not cover `hostname:port`. */
  readonly authorize: (hostname: string, port: number) => void;
  /**
   * Whether the grant names this IP address itself (`127.0.0.1`, `127.0.0.1:8080`, `[::1]:8080`),
   * which is what lets a non-public address through. `ip` is canonical and unbracketed; an
   * IPv4-mapped IPv6 address is passed as its IPv4 address, as Deno names it.
   */
  readonly literalAddressGranted: (ip: string, port: number) => boolean;
  /** One record per hop: `target` is `host:port` as Deno prints it. */
  readonly onAudit: (target: string, allowed: boolean, reason?: string) => void;
  readonly limits: FetchLimits;
  /** Aborts the fetch (the guest's signal, or the call ending). */
  readonly signal: AbortSignal;
  /** DNS seam for tests. @defaultValue node:dns lookup, all addresses, resolver order */
  readonly resolveHost?: ResolveHost | undefined;
  /** PEM certificates that replace the default trusted roots. For tests and private PKI only. */
  readonly caCertificates?: readonly string[] | undefined;
  /** @defaultValue 'Paddock' */
  readonly userAgent?: string | undefined;
}

const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);
const NORMALIZED_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);
const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const NO_BODY_STATUSES = new Set([101, 204, 205, 304]);

function normalizeMethod(method: string): string {
  if (!METHOD_TOKEN.test(method)) throw new GuestError('TypeError', 'Method is not valid');
  const upper = method.toUpperCase();
  if (FORBIDDEN_METHODS.has(upper)) throw new GuestError('TypeError', 'Method is forbidden');
  return NORMALIZED_METHODS.has(upper) ? upper : method; // Fetch normalizes only these; "patch" stays as typed
}

function requestBytes(headers: HttpHeaders, body: Uint8Array | null): number {
  let bytes = body?.byteLength ?? 0;
  for (const [name, value] of headers) bytes += Buffer.byteLength(name) + Buffer.byteLength(value, 'latin1');
  return bytes;
}

/** The first request, validated as Deno's Request constructor would before any network use. */
function firstRequest(args: FetchArgs, options: GuardedFetchOptions): HopRequest {
  const url = parseFetchUrl(args.url);
  const method = normalizeMethod(args.method);
  if (args.body !== null && (method === 'GET' || method === 'HEAD')) {
    throw new GuestError('TypeError', 'Request with GET/HEAD method cannot have body');
  }
  const headers = prepareRequestHeaders(args.headers, { userAgent: options.userAgent ?? 'Paddock' });
  const bytes = requestBytes(headers, args.body);
  if (bytes > options.limits.maxRequestBytes) throw requestTooLarge(bytes, options.limits.maxRequestBytes);
  return { url, method, headers, body: args.body };
}

/** Read through a call so the checker does not narrow `aborted` across awaits. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

function closeClient(client: Client): void {
  client.destroy().catch(() => undefined); // destroys the socket now; nothing to wait for
}

function rawHeaderPairs(raw: unknown): HttpHeaders {
  const flat = Array.isArray(raw) ? raw.map(String) : [];
  const pairs: HttpHeaders = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([(flat[i] ?? '').toLowerCase(), flat[i + 1] ?? '']);
  return pairs;
}

interface HopResponse {
  readonly client: Client;
  readonly data: Dispatcher.ResponseData;
  readonly headers: HttpHeaders;
}

async function send(
  request: HopRequest,
  addresses: readonly ParsedAddress[],
  options: GuardedFetchOptions,
  signal: AbortSignal,
): Promise<HopResponse> {
  const client = createPinnedClient(request.url, addresses, {
    timeoutMs: options.limits.timeoutMs,
    caCertificates: options.caCertificates,
  });
  try {
    const data = await client.request({
      path: `${request.url.pathname}${request.url.search}`,
      method: request.method,
      headers: withUrlCredentials(request.headers, request.url).flat(),
      body: request.body,
      signal,
      responseHeaders: 'raw',
    });
    return { client, data, headers: rawHeaderPairs(data.headers) };
  } catch (error) {
    closeClient(client);
    if (signal.aborted) throw new Interrupted();
    throw transportError(request.url, error, 'send');
  }
}

async function readBody(request: HopRequest, response: HopResponse, options: GuardedFetchOptions, signal: AbortSignal) {
  const { data, headers } = response;
  if (request.method === 'HEAD' || NO_BODY_STATUSES.has(data.statusCode)) return new Uint8Array(0);
  const contentEncoding = headers.find(([name]) => name === 'content-encoding')?.[1];
  const maxBytes = options.limits.maxResponseBytes;
  const declared = Number(headers.find(([name]) => name === 'content-length')?.[1]);
  // Wire bytes count against the cap too, so a declared length over it can only fail: fail before reading.
  if (declared > maxBytes) throw responseTooLarge(request.url, maxBytes);
  try {
    return await readCappedBody(data.body, contentEncoding, maxBytes);
  } catch (error) {
    if (signal.aborted) throw new Interrupted();
    if (error instanceof BodyLimitExceeded) throw responseTooLarge(request.url, maxBytes);
    if (error instanceof BodyDecodeFailed) throw new GuestError('TypeError', 'error decoding response body');
    throw transportError(request.url, error, 'body');
  }
}

async function followHops(args: FetchArgs, options: GuardedFetchOptions, signal: AbortSignal, current: { url: URL }) {
  let request = firstRequest(args, options);
  for (let followed = 0; ; followed++) {
    current.url = request.url;
    const target = hopTarget(request.url);
    const addresses = await admit(target, options, signal);
    const response = await send(request, addresses, options, signal);
    try {
      const location = response.headers.find(([name]) => name === 'location')?.[1];
      const next = nextHop(
        request,
        { status: response.data.statusCode, location },
        { mode: args.redirect, followed, maxRedirects: options.limits.maxRedirects },
      );
      if (next !== undefined) {
        request = next; // the redirect's own body is never read
        continue;
      }
      const body = await readBody(request, response, options, signal);
      const url = new URL(request.url.href);
      url.hash = ''; // Response.url excludes the fragment
      const result: FetchResult = {
        status: response.data.statusCode,
        statusText: canonicalReason(response.data.statusCode), // as Deno: the wire's reason phrase is ignored
        headers: response.headers,
        url: url.href,
        redirected: followed > 0,
        body,
      };
      return result;
    } finally {
      closeClient(response.client);
    }
  }
}

/**
 * Performs the guest's fetch under the grant checks and limits in `options`. Errors for the guest
 * are GuestErrors; errors thrown by the injected `authorize`/`onAudit`/`literalAddressGranted`
 * pass through unchanged.
 */
export async function guardedFetch(args: FetchArgs, options: GuardedFetchOptions): Promise<FetchResult> {
  if (options.signal.aborted) throw abortError();
  const controller = new AbortController();
  const deadline = { expired: false }; // an object, so the catch below reads the timer's write
  const timer = setTimeout(() => {
    deadline.expired = true;
    controller.abort();
  }, options.limits.timeoutMs);
  const onAbort = () => {
    controller.abort();
  };
  options.signal.addEventListener('abort', onAbort, { once: true });
  const current = { url: URL.parse(args.url) ?? new URL('about:blank') };
  try {
    return await followHops(args, options, controller.signal, current);
  } catch (error) {
    if (isAborted(options.signal)) throw abortError();
    if (deadline.expired) throw timeoutError(current.url, options.limits.timeoutMs);
    throw error;
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
  }
}
