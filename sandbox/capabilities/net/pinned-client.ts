/**
 * An undici Client for one hop whose sockets can only reach the addresses that were checked.
 * The connector keeps the URL's hostname (so the Host header, TLS SNI and certificate name check
 * all use it) but answers the socket's DNS lookup itself with the checked addresses: nothing is
 * resolved a second time, so a rebinding DNS answer has no way in. After connecting, the peer
 * address is compared with the checked set once more.
 */
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Client, buildConnector } from 'undici';
import { parseIpAddress } from './address.ts';
import type { ParsedAddress } from './address.ts';

export interface PinnedClientOptions {
  readonly timeoutMs: number;
  /** PEM certificates that replace the default trusted roots (tests, private PKI). */
  readonly caCertificates?: readonly string[] | undefined;
}

/** The socket ended up somewhere other than a checked address. Never expected; checked anyway. */
export class PinViolation extends Error {}

function pinnedLookup(addresses: readonly ParsedAddress[]): LookupFunction {
  const answers: LookupAddress[] = addresses.map(({ address, family }) => ({ address, family }));
  return (_hostname, options, callback) => {
    const first = answers[0];
    if (options.all === true) callback(null, answers);
    else if (first !== undefined) callback(null, first.address, first.family);
    else callback(Object.assign(new Error('no checked address'), { code: 'ENOTFOUND' }), '', 0);
  };
}

export function createPinnedClient(origin: URL, addresses: readonly ParsedAddress[], options: PinnedClientOptions): Client {
  const checked = new Set(addresses.map(({ address }) => address));
  const baseConnect = buildConnector({
    lookup: pinnedLookup(addresses),
    // Happy Eyeballs across the checked addresses only (e.g. both ::1 and 127.0.0.1 for localhost).
    autoSelectFamily: addresses.length > 1,
    timeout: options.timeoutMs,
    maxCachedSessions: 0, // no TLS session shared beyond this hop
    allowH2: false,
    rejectUnauthorized: true,
    ...(options.caCertificates === undefined ? {} : { ca: [...options.caCertificates] }),
  });
  const connect: buildConnector.connector = (connectOptions, callback) => {
    baseConnect(connectOptions, (...result) => {
      const [error, socket] = result;
      if (error !== null) {
        callback(error, null);
        return;
      }
      const peer = parseIpAddress(socket.remoteAddress ?? '');
      if (peer === undefined || !checked.has(peer.address)) {
        socket.destroy();
        callback(new PinViolation('connected to an address that was not checked'), null);
        return;
      }
      callback(null, socket);
    });
  };
  return new Client(origin.origin, {
    connect,
    pipelining: 1,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
}
