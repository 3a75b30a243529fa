/**
 * IP addresses and subnets as Deno's permission code reads them (Rust's `std::net` parsers and the
 * `ipnetwork` crate): strict dotted-quad IPv4 (no leading zeros, no shorthand), IPv6 with `::` and an
 * optional trailing dotted quad, and IPv4-mapped IPv6 folded to IPv4 so that `[::ffff:10.0.0.1]` and
 * `10.0.0.1` are one address everywhere.
 */

export type IpAddress =
  | { readonly version: 4; readonly octets: readonly number[] }
  | { readonly version: 6; readonly groups: readonly number[] };

export interface IpSubnet {
  readonly address: IpAddress;
  readonly prefix: number;
}

const DECIMAL_OCTET = /^(?:0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

/** Four decimal octets, as Rust's `Ipv4Addr::from_str` accepts them (so `0177.0.0.1` is not an address). */
export function parseIpv4(text: string): IpAddress | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const octets: number[] = [];
  for (const part of parts) {
    if (!DECIMAL_OCTET.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    octets.push(value);
  }
  return { version: 4, octets };
}

/** An IPv6 address without brackets or zone, as Rust's `Ipv6Addr::from_str` accepts it. */
export function parseIpv6(text: string): IpAddress | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  if (halves.length === 1) {
    const groups = parseGroups(text, true);
    return groups?.length === 8 ? { version: 6, groups } : undefined;
  }
  const head = parseGroups(halves[0] ?? '', false);
  const tail = parseGroups(halves[1] ?? '', true);
  if (head === undefined || tail === undefined || head.length + tail.length > 7) return undefined;
  const zeros = new Array<number>(8 - head.length - tail.length).fill(0);
  return { version: 6, groups: [...head, ...zeros, ...tail] };
}

function parseGroups(text: string, allowTrailingIpv4: boolean): number[] | undefined {
  if (text === '') return [];
  const pieces = text.split(':');
  const groups: number[] = [];
  for (const [index, piece] of pieces.entries()) {
    if (allowTrailingIpv4 && index === pieces.length - 1 && piece.includes('.')) {
      const ipv4 = parseIpv4(piece);
      if (ipv4?.version !== 4) return undefined;
      const [a = 0, b = 0, c = 0, d = 0] = ipv4.octets;
      groups.push((a << 8) | b, (c << 8) | d);
      continue;
    }
    if (!HEX_GROUP.test(piece)) return undefined;
    groups.push(Number.parseInt(piece, 16));
  }
  return groups;
}

/** IPv4 or bare IPv6 (Rust's `IpAddr::from_str`), canonical: IPv4-mapped IPv6 becomes IPv4. */
export function parseIp(text: string): IpAddress | undefined {
  const parsed = parseIpv4(text) ?? parseIpv6(text);
  return parsed === undefined ? undefined : canonicalIp(parsed);
}

/** `::ffff:a.b.c.d` -> `a.b.c.d` (Rust's `IpAddr::to_canonical`); every other address as is. */
export function canonicalIp(ip: IpAddress): IpAddress {
  if (ip.version === 4) return ip;
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = ip.groups;
  const mapped = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff;
  return mapped ? { version: 4, octets: [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff] } : ip;
}

/** Dotted quad, or RFC 5952 IPv6 (longest run of two or more zero groups compressed), without brackets. */
export function formatIp(ip: IpAddress): string {
  if (ip.version === 4) return ip.octets.join('.');
  let bestStart = -1;
  let bestLength = 0;
  for (let start = 0; start < 8; ) {
    if (ip.groups[start] !== 0) {
      start += 1;
      continue;
    }
    let end = start;
    while (end < 8 && ip.groups[end] === 0) end += 1;
    if (end - start > bestLength) [bestStart, bestLength] = [start, end - start];
    start = end;
  }
  const hex = ip.groups.map((group) => group.toString(16));
  if (bestLength < 2) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

export function ipEquals(a: IpAddress, b: IpAddress): boolean {
  const left = bitsOf(a);
  const right = bitsOf(b);
  return a.version === b.version && left.every((bit, index) => bit === right[index]);
}

/** `10.0.0.0/8` (the `ipnetwork` crate: a strict address, then a prefix no longer than the address). */
export function parseIpSubnet(text: string): IpSubnet | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = parseIpv4(text.slice(0, slash)) ?? parseIpv6(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (address === undefined || !/^[0-9]{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > (address.version === 4 ? 32 : 128)) return undefined;
  return { address, prefix };
}

export function formatIpSubnet(subnet: IpSubnet): string {
  return `${formatIp(subnet.address)}/${subnet.prefix}`;
}

export function subnetContains(subnet: IpSubnet, ip: IpAddress): boolean {
  if (subnet.address.version !== ip.version) return false;
  const network = bitsOf(subnet.address);
  const candidate = bitsOf(ip);
  for (let bit = 0; bit < subnet.prefix; bit += 1) {
    if (network[bit] !== candidate[bit]) return false;
  }
  return true;
}

/** True when every address of `inner` is also in `outer`. */
export function subnetCoversSubnet(outer: IpSubnet, inner: IpSubnet): boolean {
  return inner.prefix >= outer.prefix && subnetContains(outer, inner.address);
}

function bitsOf(ip: IpAddress): number[] {
  const [values, width] = ip.version === 4 ? [ip.octets, 8] : [ip.groups, 16];
  const bits: number[] = [];
  for (const value of values) {
    for (let shift = width - 1; shift >= 0; shift -= 1) bits.push((value >> shift) & 1);
  }
  return bits;
}
