/**
 * From the URL the guest asked for to the target one hop checks and connects to: scheme, port,
 * the host as Deno names it in permission checks, and the literal address when there is one.
 * WHATWG URL parsing has already folded decimal/octal/hex IPv4 spellings into dotted decimal, and
 * `parseIpAddress` accepts them anyway, so every path to an address ends in its canonical form.
 */
import { GuestError } from '../../errors.ts';
import { parseIpAddress, permissionHost } from './address.ts';
import type { ParsedAddress } from './address.ts';

export interface HopTarget {
  readonly url: URL;
  /** The effective port: the URL's, else 80 for http: and 443 for https: (Deno checks `example.com:443`). */
  readonly port: number;
  /** The host for the grant check and messages: lowercase, no trailing dot, `[v6]`, mapped IPv6 as IPv4. */
  readonly host: string;
  /** Set when the URL names an IP address: nothing to resolve, this is the address. */
  readonly literal: ParsedAddress | undefined;
  /** The name to resolve when `literal` is unset. */
  readonly dnsName: string;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443 };

// The Fetch standard's "bad port" list, plus 0, which Deno also blocks.
const BAD_PORTS = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109,
  110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531,
  532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060,
  5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

export function isHttpUrl(url: URL): boolean {
  return url.protocol === 'http:' || url.protocol === 'https:';
}

/** Parses a URL as Deno's fetch does, with Deno's message on failure. */
export function parseFetchUrl(text: string, base?: URL): URL {
  const parsed = URL.parse(text, base?.href);
  if (parsed !== null) return parsed;
  const message = base === undefined ? `Invalid URL: '${text}'` : `Invalid URL: '${text}' with base '${base.href}'`;
  throw new GuestError('TypeError', message);
}

/** The target of one hop; throws Deno's TypeError for a scheme other than http(s) or a blocked port. */
export function hopTarget(url: URL): HopTarget {
  const defaultPort = DEFAULT_PORTS[url.protocol];
  if (defaultPort === undefined) {
    throw new GuestError('TypeError', `Url scheme '${url.protocol.slice(0, -1)}' not supported`);
  }
  const port = url.port === '' ? defaultPort : Number(url.port);
  if (BAD_PORTS.has(port)) throw new GuestError('TypeError', `Fetch failed: Requests to port ${port} are blocked`);
  const literal = parseIpAddress(url.hostname);
  const dnsName = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  return { url, port, host: literal === undefined ? dnsName : permissionHost(literal), literal, dnsName };
}

/** `host:port` as Deno prints it in NotCapable messages and as the audit log records it. */
export function netTarget(host: string, port: number): string {
  return `${host}:${port}`;
}

export function sameOrigin(a: URL, b: URL): boolean {
  return a.origin === b.origin;
}

/** The URL without credentials, for messages that may be logged. */
export function redactedHref(url: URL): string {
  if (url.username === '' && url.password === '') return url.href;
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}
