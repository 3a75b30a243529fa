/**
 * May this hop go out, and to which addresses? The grant must cover host:port (Deno's check);
 * then the host is resolved exactly once, and every address it resolves to must be public or be
 * granted as a literal address. A hostname grant never opens private space: `localhost` granted
 * still refuses 127.0.0.1 unless `127.0.0.1` (or `127.0.0.1:PORT`) is granted too. Requiring every
 * answer to pass, rather than picking a passing one, keeps the decision independent of answer
 * order and makes a name that points into internal space at all a visible, audited denial.
 */
import { lookup } from 'node:dns/promises';
import { inspectAddress, parseIpAddress, permissionHost } from './address.ts';
import type { AddressClass, ParsedAddress } from './address.ts';
import { dnsError, netNotCapable } from './fetch-errors.ts';
import { netTarget } from './target.ts';
import type { HopTarget } from './target.ts';

/** All addresses `hostname` resolves to, in resolver order. */
export type ResolveHost = (hostname: string) => Promise<readonly string[]>;

export interface AdmitOptions {
  readonly authorize: (hostname: string, port: number) => void;
  readonly literalAddressGranted: (ip: string, port: number) => boolean;
  readonly onAudit: (target: string, allowed: boolean, reason?: string) => void;
  readonly resolveHost?: ResolveHost | undefined;
}

const systemResolveHost: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, order: 'verbatim' })).map(({ address }) => address);

const CLASS_WORDS: Readonly<Record<AddressClass, string>> = {
  public: 'public',
  loopback: 'loopback',
  private: 'private',
  'link-local': 'link-local',
  cgnat: 'carrier-grade NAT',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  reserved: 'reserved',
  documentation: 'documentation',
  'unique-local': 'unique local',
  metadata: 'cloud metadata',
};

/** Rejected by the deadline or the caller's signal; the top level says which. */
export class Interrupted extends Error {}

/** Rejects with Interrupted as soon as `signal` aborts, for work that cannot be cancelled (DNS). */
export function untilInterrupted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => undefined); // the loser of the race must not become an unhandled rejection
  if (signal.aborted) return Promise.reject(new Interrupted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(new Interrupted());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      signal.removeEventListener('abort', onAbort);
    });
  });
}

/** Grant check, one resolution, address check; audited once per hop either way. */
export async function admit(target: HopTarget, options: AdmitOptions, signal: AbortSignal): Promise<ParsedAddress[]> {
  const audited = netTarget(target.host, target.port);
  try {
    options.authorize(target.host, target.port);
  } catch (error) {
    options.onAudit(audited, false, 'not granted');
    throw error;
  }
  const addresses = target.literal === undefined ? await resolve(target, options, signal) : [target.literal];
  for (const address of addresses) {
    const info = inspectAddress(address.address);
    if (info === undefined || info.class === 'public') continue;
    const host = permissionHost(address);
    const grantAddress = host.startsWith('[') ? address.address : host;
    if (options.literalAddressGranted(grantAddress, target.port)) continue;
    const embedded = info.embeddedIpv4 === undefined ? '' : ` (IPv4 ${info.embeddedIpv4})`;
    const what = `${CLASS_WORDS[info.class]} address ${address.address}${embedded}`;
    options.onAudit(audited, false, target.literal === undefined ? `resolves to ${what}` : what);
    throw netNotCapable(netTarget(host, target.port));
  }
  options.onAudit(audited, true);
  return addresses;
}

async function resolve(target: HopTarget, options: AdmitOptions, signal: AbortSignal): Promise<ParsedAddress[]> {
  let answers: readonly string[];
  try {
    answers = await untilInterrupted((options.resolveHost ?? systemResolveHost)(target.dnsName), signal);
  } catch (error) {
    if (error instanceof Interrupted) throw error;
    throw dnsError(target.url, error);
  }
  const unique = new Map<string, ParsedAddress>();
  for (const answer of answers) {
    const parsed = parseIpAddress(answer);
    if (parsed !== undefined) unique.set(parsed.address, parsed);
  }
  if (unique.size === 0) throw dnsError(target.url, { code: 'ENODATA' });
  return [...unique.values()];
}
