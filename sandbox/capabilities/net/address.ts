/**
 * IP address parsing and classification for the SSRF guard. Guest code picks the URL, so every
 * address the host is about to connect to is classified here, and only `public` ones pass without a
 * literal grant. Reused by the web built-ins, so it accepts every spelling a URL parser or resolver
 * would turn into an address (decimal, octal, hex, shortened IPv4; bracketed, zoned, mapped IPv6).
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'unique-local'
  | 'metadata';

export interface ParsedAddress {
  /** Canonical text: dotted decimal for IPv4, RFC 5952 compressed lowercase for IPv6, no brackets, no zone. */
  readonly address: string;
  readonly family: 4 | 6;
}

export interface AddressInfo extends ParsedAddress {
  readonly class: AddressClass;
  /** The IPv4 address an IPv6 form carries (mapped, compatible, NAT64, 6to4), when it was classified by it. */
  readonly embeddedIpv4?: string | undefined;
}

/**
 * Well-known instance-metadata and host-platform endpoints. Some sit in public space (Azure's
 * WireServer), so they are matched before any range.
 */
export const METADATA_ADDRESSES: readonly string[] = [
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle, Hetzner... IMDS
  '169.254.170.2', // AWS ECS task metadata and credentials
  '169.254.170.23', // AWS EKS Pod Identity agent
  '169.254.0.23', // Tencent Cloud metadata
  '100.100.100.200', // Alibaba Cloud metadata
  '168.63.129.16', // Azure WireServer / host platform
  '192.0.0.192', // Oracle Cloud Classic metadata
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS EKS Pod Identity agent over IPv6
  'fd20:ce::254', // GCP metadata over IPv6
];

type Subnet = readonly [network: string, prefix: number];

// First match wins; ranges from the IANA IPv4/IPv6 special-purpose address registries.
const IPV4_RANGES: readonly (readonly [AddressClass, readonly Subnet[]])[] = [
  ['broadcast', [['255.255.255.255', 32]]],
  ['unspecified', [['0.0.0.0', 32]]],
  ['loopback', [['127.0.0.0', 8]]],
  ['private', [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16]]],
  ['cgnat', [['100.64.0.0', 10]]],
  ['link-local', [['169.254.0.0', 16]]],
  ['multicast', [['224.0.0.0', 4]]],
  ['documentation', [['192.0.2.0', 24], ['198.51.100.0', 24], ['203.0.113.0', 24]]],
  [
    'reserved',
    [
      ['0.0.0.0', 8], // "this network": Linux connects 0.x.y.z to the local host
      ['192.0.0.0', 24], // IETF protocol assignments
      ['192.88.99.0', 24], // deprecated 6to4 relay anycast
      ['198.18.0.0', 15], // benchmarking
      ['240.0.0.0', 4], // reserved for future use
    ],
  ],
];

const IPV6_RANGES: readonly (readonly [AddressClass, readonly Subnet[]])[] = [
  ['unspecified', [['::', 128]]],
  ['loopback', [['::1', 128]]],
  ['documentation', [['2001:db8::', 32], ['3fff::', 20]]],
  [
    'reserved',
    [
      ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215)
      ['100::', 64], // discard-only
      ['2001::', 23], // IETF protocol assignments, Teredo (its IPv4 is obfuscated: refuse outright)
    ],
  ],
  ['unique-local', [['fc00::', 7]]],
  ['link-local', [['fe80::', 10]]],
  ['reserved', [['fec0::', 10]]], // deprecated site-local
  ['multicast', [['ff00::', 8]]],
];

const GLOBAL_UNICAST_V6: Subnet = ['2000::', 3];

function blockList(family: 'ipv4' | 'ipv6', subnets: readonly Subnet[]): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, family);
  return list;
}

const IPV4_TABLE = IPV4_RANGES.map(([cls, subnets]) => [cls, blockList('ipv4', subnets)] as const);
const IPV6_TABLE = IPV6_RANGES.map(([cls, subnets]) => [cls, blockList('ipv6', subnets)] as const);
const GLOBAL_UNICAST = blockList('ipv6', [GLOBAL_UNICAST_V6]);

/**
 * Parses IPv4 the way the WHATWG URL parser and inet_aton do: one to four parts, each decimal,
 * octal (leading `0`) or hex (`0x`), the last part filling the remaining bytes (`127.1`,
 * `0x7f000001`, `017700000001`). Returns the address as an unsigned 32-bit number.
 */
export function parseIpv4Loose(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length > 1 && parts.at(-1) === '') parts.pop(); // one trailing dot, as URL parsing allows
  if (parts.length === 0 || parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    const value = parseIpv4Part(part);
    if (value === undefined) return undefined;
    numbers.push(value);
  }
  const last = numbers.pop() ?? 0;
  if (numbers.some((n) => n > 255) || last >= 256 ** (4 - numbers.length)) return undefined;
  return numbers.reduce((sum, n, i) => sum + n * 256 ** (3 - i), last);
}

function parseIpv4Part(part: string): number | undefined {
  let digits = part;
  let radix = 10;
  if (/^0x/i.test(part)) {
    digits = part.slice(2);
    radix = 16;
    if (digits === '') return 0; // "0x" alone is zero, as in the URL standard
  } else if (part.length > 1 && part.startsWith('0')) {
    digits = part.slice(1);
    radix = 8;
  }
  const pattern = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!pattern.test(digits)) return undefined;
  const value = Number.parseInt(digits, radix);
  return Number.isSafeInteger(value) ? value : undefined;
}

export function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/**
 * Any accepted spelling of an IP address -> canonical text and family; `undefined` for anything
 * else (a hostname). Accepts `[v6]`, `v6%zone` and the loose IPv4 forms.
 */
export function parseIpAddress(text: string): ParsedAddress | undefined {
  let candidate = text.trim();
  const bracketed = candidate.startsWith('[') && candidate.endsWith(']');
  if (bracketed) candidate = candidate.slice(1, -1);
  const zone = candidate.indexOf('%');
  if (zone !== -1) {
    if (zone === candidate.length - 1) return undefined; // "%" with no zone name
    candidate = candidate.slice(0, zone);
  }
  if (isIPv6(candidate)) {
    // The URL serializer is Node's canonical IPv6 printer (compressed, lowercase, dotted tail folded).
    return { address: new URL(`http://[${candidate}]/`).hostname.slice(1, -1), family: 6 };
  }
  if (bracketed || zone !== -1) return undefined; // brackets and zones belong to IPv6 only
  if (isIPv4(candidate)) return { address: candidate, family: 4 };
  const loose = parseIpv4Loose(candidate);
  return loose === undefined ? undefined : { address: formatIpv4(loose), family: 4 };
}

/** The eight 16-bit groups of a canonical IPv6 address. */
function ipv6Groups(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function groupsToIpv4(high: number, low: number): string {
  return formatIpv4(high * 65_536 + low);
}

/** The IPv4 address an IPv6 form routes to, for the forms where that is well defined. */
function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = g;
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroPrefix && g5 === 0xffff) return groupsToIpv4(g6, g7); // ::ffff:a.b.c.d (mapped)
  if (zeroPrefix && g5 === 0) return groupsToIpv4(g6, g7); // ::a.b.c.d (compatible, deprecated)
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return groupsToIpv4(g6, g7); // NAT64
  if (g0 === 0x2002) return groupsToIpv4(g1 ?? 0, g2 ?? 0); // 6to4: 2002:AABB:CCDD::/48
  return undefined;
}

function classifyIpv4(address: string): AddressClass {
  if (METADATA_ADDRESSES.includes(address)) return 'metadata';
  for (const [cls, list] of IPV4_TABLE) if (list.check(address, 'ipv4')) return cls;
  return 'public';
}

function classifyIpv6(address: string): { class: AddressClass; embeddedIpv4?: string } {
  if (METADATA_ADDRESSES.includes(address)) return { class: 'metadata' };
  // :: and ::1 are checked before the embedded forms, which would read them as 0.0.0.0 and 0.0.0.1.
  if (address === '::') return { class: 'unspecified' };
  if (address === '::1') return { class: 'loopback' };
  const embedded = embeddedIpv4(address);
  if (embedded !== undefined) return { class: classifyIpv4(embedded), embeddedIpv4: embedded };
  for (const [cls, list] of IPV6_TABLE) if (list.check(address, 'ipv6')) return { class: cls };
  return { class: GLOBAL_UNICAST.check(address, 'ipv6') ? 'public' : 'reserved' };
}

/** Classifies any accepted spelling of an address; `undefined` when the text is not an IP address. */
export function inspectAddress(text: string): AddressInfo | undefined {
  const parsed = parseIpAddress(text);
  if (parsed === undefined) return undefined;
  if (parsed.family === 4) return { ...parsed, class: classifyIpv4(parsed.address) };
  return { ...parsed, ...classifyIpv6(parsed.address) };
}

export function classifyAddress(text: string): AddressClass | undefined {
  return inspectAddress(text)?.class;
}

/** True only for an IP address in public unicast space; false for anything else, hostnames included. */
export function isPublicAddress(text: string): boolean {
  return classifyAddress(text) === 'public';
}

/**
 * The host as Deno names it in permission checks and messages: IPv4-mapped IPv6 becomes its IPv4
 * address (as Rust's `to_canonical` does), other IPv6 addresses are bracketed.
 */
export function permissionHost(address: ParsedAddress): string {
  if (address.family === 4) return address.address;
  const groups = ipv6Groups(address.address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return groupsToIpv4(groups[6] ?? 0, groups[7] ?? 0);
  }
  return `[${address.address}]`;
}
