/**
 * Net matching as Deno does it (`NetDescriptor::matches_allow`), plus the intersection of two
 * entries. An entry without a port covers every port; a name covers only itself (never the
 * addresses it resolves to); `*.example.com` covers `example.com` and every name below it; a
 * subnet covers the addresses in it.
 */
import { ipEquals, subnetContains, subnetCoversSubnet } from './ip-address.ts';
import type { NetDescriptor, NetHost } from './net-descriptor.ts';

/** True when the granted entry `allow` lets the program reach `query`. */
export function netCovers(allow: NetDescriptor, query: NetDescriptor): boolean {
  if (allow.port !== undefined && allow.port !== query.port) return false;
  return hostCovers(allow.host, query.host);
}

function hostCovers(allow: NetHost, query: NetHost): boolean {
  switch (allow.kind) {
    case 'name': return query.kind === 'name' && query.name === allow.name;
    case 'wildcard':
      return (query.kind === 'name' && isSameOrBelow(query.name, allow.suffix))
        || (query.kind === 'wildcard' && query.suffix === allow.suffix);
    case 'ip': return query.kind === 'ip' && ipEquals(allow.ip, query.ip);
    case 'subnet': return query.kind === 'ip' && subnetContains(allow.subnet, query.ip);
  }
}

/** What both entries allow, as one entry, or undefined when they share nothing. */
export function intersectNet(a: NetDescriptor, b: NetDescriptor): NetDescriptor | undefined {
  if (a.port !== undefined && b.port !== undefined && a.port !== b.port) return undefined;
  const host = intersectHosts(a.host, b.host);
  return host === undefined ? undefined : { host, port: a.port ?? b.port };
}

function intersectHosts(a: NetHost, b: NetHost): NetHost | undefined {
  if (hostIncludes(a, b)) return b;
  if (hostIncludes(b, a)) return a;
  return undefined;
}

/** Set inclusion between hosts (wider than `hostCovers`: a wildcard includes a narrower wildcard). */
export function hostIncludes(outer: NetHost, inner: NetHost): boolean {
  if (outer.kind === 'wildcard' && inner.kind === 'wildcard') return isSameOrBelow(inner.suffix, outer.suffix);
  if (outer.kind === 'subnet' && inner.kind === 'subnet') return subnetCoversSubnet(outer.subnet, inner.subnet);
  return hostCovers(outer, inner);
}

/** True when every target `inner` allows is also allowed by `outer`. */
export function netIncludes(outer: NetDescriptor, inner: NetDescriptor): boolean {
  if (outer.port !== undefined && outer.port !== inner.port) return false;
  return hostIncludes(outer.host, inner.host);
}

function isSameOrBelow(name: string, suffix: string): boolean {
  return name === suffix || name.endsWith(`.${suffix}`);
}
