/**
 * The request headers the host will actually send. The guest's list is validated as Deno's
 * `Headers` does, and the headers that decide where and how the message is framed are dropped:
 * the host sets Host from the checked URL (no reaching another vhost on the pinned address) and
 * owns framing and hop-by-hop semantics (no smuggling through Connection tokens or Transfer-Encoding).
 */
import { GuestError } from '../../errors.ts';
import type { HttpHeaders } from '../../protocol.ts';

/** Dropped silently, as a browser's Headers would: the host owns these. */
const HOST_OWNED = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'http2-settings',
]);

/** Removed when a redirect leaves the origin (the Fetch standard names Authorization; Deno also drops these). */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);

/** Removed when a redirect turns the request into a bodiless GET (Fetch: "request-body-header name"). */
const BODY_HEADERS = new Set(['content-encoding', 'content-language', 'content-location', 'content-type']);

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// A header value may not contain NUL, CR or LF, nor anything beyond a byte.
const INVALID_VALUE = /[\0\r\n]|[^\0-\xff]/;
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

export interface DefaultHeaders {
  readonly userAgent: string;
}

/** Validates, normalizes and completes the guest's headers; throws Deno's TypeError for an invalid one. */
export function prepareRequestHeaders(headers: HttpHeaders, defaults: DefaultHeaders): HttpHeaders {
  const prepared: HttpHeaders = [];
  for (const [rawName, rawValue] of headers) {
    if (!TOKEN.test(rawName)) throw new GuestError('TypeError', `Invalid header name: "${rawName}"`);
    const value = rawValue.replace(EDGE_WHITESPACE, '');
    if (INVALID_VALUE.test(value)) throw new GuestError('TypeError', `Invalid header value: "${rawValue}"`);
    const name = rawName.toLowerCase();
    if (!HOST_OWNED.has(name)) prepared.push([name, value]);
  }
  // What Deno sends when the guest does not say otherwise.
  const fallbacks: HttpHeaders = [
    ['accept', '*/*'],
    ['accept-language', '*'],
    ['user-agent', defaults.userAgent],
    ['accept-encoding', 'gzip, br'],
  ];
  for (const fallback of fallbacks) if (!hasHeader(prepared, fallback[0])) prepared.push(fallback);
  return prepared;
}

export function hasHeader(headers: HttpHeaders, name: string): boolean {
  return headers.some(([candidate]) => candidate === name);
}

/** Headers for the next hop of a redirect. */
export function redirectHeaders(headers: HttpHeaders, change: { crossOrigin: boolean; dropBody: boolean }): HttpHeaders {
  return headers.filter(
    ([name]) => !(change.crossOrigin && CREDENTIAL_HEADERS.has(name)) && !(change.dropBody && BODY_HEADERS.has(name)),
  );
}

/** Basic credentials from the URL's userinfo (Deno sends them), unless the guest set Authorization itself. */
export function withUrlCredentials(headers: HttpHeaders, url: URL): HttpHeaders {
  if ((url.username === '' && url.password === '') || hasHeader(headers, 'authorization')) return headers;
  const credentials = `${percentDecode(url.username)}:${percentDecode(url.password)}`;
  return [...headers, ['authorization', `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`]];
}

function percentDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // a stray "%" that is not an escape stays as typed
  }
}
