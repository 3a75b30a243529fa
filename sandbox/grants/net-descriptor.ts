/**
 * `--allow-net` entries and net queries, parsed the way Deno 2 parses them (deno_permissions'
 * `Host::parse_inner` and `NetDescriptor::parse_inner`, checked against Deno 2.9): every message
 * here is Deno's own, so a tool author sees the same complaint from Paddock and from `deno run`.
 *
 * Hosts: a name (ASCII, case-insensitive, one trailing dot dropped), `*.name` in grant lists (the
 * name and every name under it), an IPv4 address, an IPv6 address in brackets, an IPv4 subnet
 * `10.0.0.0/8`. An optional `:port` follows. Names are labels of `[a-z0-9_#-]`, as the `fqdn`
 * crate Deno uses accepts them; anything that is not an address is read as a name, so `1.2.3` is
 * a (strange) host name, not an address.
 */
import { formatIp, formatIpSubnet, parseIp, parseIpSubnet, parseIpv6, canonicalIp } from './ip-address.ts';
import type { IpAddress, IpSubnet } from './ip-address.ts';

export type NetHost =
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'wildcard'; readonly suffix: string }
  | { readonly kind: 'ip'; readonly ip: IpAddress }
  | { readonly kind: 'subnet'; readonly subnet: IpSubnet };

export interface NetDescriptor {
  readonly host: NetHost;
  /** Undefined: every port. */
  readonly port: number | undefined;
}

/** A net entry or query Deno would refuse; the message is Deno's. */
export class NetSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Grant lists accept `*.example.com`; queries and connection targets do not. */
export type HostSyntax = 'list' | 'query';

const LABEL_CHAR = /^[a-z0-9_#-]$/;
// The fqdn crate stores label lengths in one byte.
const MAX_LABEL_LENGTH = 255;
const PORT = /^\+?[0-9]+$/;

/** A host without a port (a URL's host, `Deno.connect`'s hostname): Deno's `Host::parse_inner`. */
export function parseHost(text: string, syntax: HostSyntax): NetHost {
  if (text.startsWith('[') && text.endsWith(']')) {
    const ip = parseIpv6(stripZone(text.slice(1, -1)));
    if (ip === undefined) throw new NetSyntaxError(`invalid IPv6 address: '${text}'`);
    return { kind: 'ip', ip: canonicalIp(ip) };
  }
  const hasTrailingDot = text.endsWith('.');
  const withoutDot = hasTrailingDot ? text.slice(0, -1) : text;
  const ip = parseIp(stripZone(withoutDot));
  if (ip !== undefined) {
    if (hasTrailingDot) throw new NetSyntaxError(`invalid host: '${withoutDot}'`);
    return { kind: 'ip', ip };
  }
  const subnet = parseIpSubnet(text);
  if (subnet !== undefined) return { kind: 'subnet', subnet };

  // Only ASCII letters fold: `toLowerCase` would turn the Kelvin sign into a `k`.
  const lower = text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
  const wildcard = syntax === 'list' && lower.startsWith('*.');
  const name = checkName(wildcard ? lower.slice(2) : lower, text);
  return wildcard ? { kind: 'wildcard', suffix: name } : { kind: 'name', name };
}

/** `host`, `host:port`, `[v6]:port` (Deno's `NetDescriptor::parse_inner`; vsock is not supported). */
export function parseNetDescriptor(text: string, syntax: HostSyntax): NetDescriptor {
  if (text.startsWith('vsock:')) throw new NetSyntaxError(`invalid value '${text}': vsock addresses are not supported`);
  if (text.startsWith('http://') || text.startsWith('https://')) throw urlNotSupported(text);

  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) throw new NetSyntaxError(`invalid host: '${text}'`);
    const ipText = text.slice(1, close);
    const ip = parseIpv6(stripZone(ipText));
    if (ip === undefined) throw new NetSyntaxError(`invalid IPv6 address in '${text}': '${ipText}'`);
    const after = text.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) throw new NetSyntaxError(`invalid host: '${text}'`);
    const port = after === '' ? undefined : parsePort(after.slice(1));
    if (port === null) throw new NetSyntaxError(`invalid port in '${text}': '${after.slice(1)}'`);
    return { host: { kind: 'ip', ip: canonicalIp(ip) }, port };
  }

  const colon = text.indexOf(':');
  const hostText = colon < 0 ? text : text.slice(0, colon);
  const portText = colon < 0 ? '' : text.slice(colon + 1);
  if (colon >= 0 && portText === '') throw new NetSyntaxError(`invalid empty port in '${text}'`);
  const host = parseHost(hostText, syntax);
  if (portText === '') return { host, port: undefined };
  const port = parsePort(portText);
  if (port === null) {
    // A bare IPv6 address has at least two colons: say what is wrong rather than "invalid port".
    const message = portText.includes(':')
      ? `ipv6 addresses must be enclosed in square brackets: '${text}'`
      : `invalid port in '${text}': '${portText}'`;
    throw new NetSyntaxError(message);
  }
  return { host, port };
}

/**
 * One `--allow-net` value as the Deno CLI reads it: a URL is refused, and a bare `:port` means that
 * port on `0.0.0.0`, `127.0.0.1` and `localhost`.
 */
export function parseNetEntry(text: string): NetDescriptor[] {
  if (text.includes('://')) throw urlNotSupported(text);
  if (text.startsWith(':')) {
    const port = parsePort(text.slice(1));
    if (port !== null) {
      return ['0.0.0.0', '127.0.0.1', 'localhost'].map((host) => parseNetDescriptor(`${host}:${port}`, 'list'));
    }
  }
  return [parseNetDescriptor(text, 'list')];
}

export function formatNetHost(host: NetHost): string {
  switch (host.kind) {
    case 'name': return host.name;
    case 'wildcard': return `*.${host.suffix}`;
    case 'ip': return host.ip.version === 4 ? formatIp(host.ip) : `[${formatIp(host.ip)}]`;
    case 'subnet': return formatIpSubnet(host.subnet);
  }
}

/** Deno's display form: `example.com:443`, `[::1]:8080`, `*.example.com`. */
export function formatNetDescriptor(descriptor: NetDescriptor): string {
  const host = formatNetHost(descriptor.host);
  return descriptor.port === undefined ? host : `${host}:${descriptor.port}`;
}

/** Rust's `u16::from_str`: digits with an optional `+`, at most 65535; null when it is not a port. */
export function parsePort(text: string): number | null {
  if (!PORT.test(text)) return null;
  const value = Number(text);
  return value <= 65_535 ? value : null;
}

function checkName(name: string, original: string): string {
  const withoutDot = name.endsWith('.') ? name.slice(0, -1) : name;
  if (withoutDot === '') throw new NetSyntaxError(`invalid empty host: '${original}'`);
  for (const label of withoutDot.split('.')) {
    if (label === '') throw new NetSyntaxError(`invalid host '${original}': empty label found in FQDN`);
    for (const char of label) {
      if (!LABEL_CHAR.test(char)) throw new NetSyntaxError(`invalid host '${original}': invalid char found in FQDN`);
    }
    if (label.length > MAX_LABEL_LENGTH) throw new NetSyntaxError(`invalid host '${original}': too long label found in FQDN`);
  }
  return withoutDot;
}

function stripZone(text: string): string {
  const percent = text.indexOf('%');
  return percent < 0 ? text : text.slice(0, percent);
}

function urlNotSupported(text: string): NetSyntaxError {
  return new NetSyntaxError(`invalid value '${text}': URLs are not supported, only domains and IPs`);
}
