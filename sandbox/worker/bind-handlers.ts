import type { AuditSink } from '../audit.ts';
import { bindEnv } from '../capabilities/env.ts';
import { bindFs } from '../capabilities/fs.ts';
import type * as FetchCapability from '../capabilities/net/fetch.ts';
import { bindPermissions } from '../capabilities/permissions.ts';
import { CallError } from '../errors.ts';
import { checkNet, isLiteralAddressGranted } from '../grants/check.ts';
import type { Grant } from '../grants/grant.ts';
import type { HostHandlers } from '../host/run-in-isolate.ts';
import type { CallRequest } from './messages.ts';

let fetchCapability: Promise<typeof FetchCapability> | undefined;

/**
 * The net capability, loaded on first use: undici is a third of a worker's start-up (~125 ms of
 * ~350 ms measured), which a replacement worker should not pay before it can serve. The worker
 * also loads it in the background shortly after it is ready.
 */
export function loadFetchCapability(): Promise<typeof FetchCapability> {
  fetchCapability ??= import('../capabilities/net/fetch.ts').catch((error: unknown) => {
    fetchCapability = undefined; // let a later fetch try again
    throw error;
  });
  return fetchCapability;
}

export interface BoundHandlers {
  handlers: HostHandlers;
  /** Called when the call ends: every capability refuses from then on. */
  revoke(): void;
}

/**
 * Binds the capability host functions (net, fs, env, permissions) to one call's grant. Each checks
 * the grant at the point of use and audits; all of them are revoked together when the call ends.
 */
export function bindHandlers(request: CallRequest, audit: AuditSink): BoundHandlers {
  const grant = request.grant as Grant;
  const { identity, limits, cwd } = request;
  const fs = bindFs(grant, identity, { cwd, audit, maxReadBytes: limits.maxFileBytes, maxWriteBytes: limits.maxFileBytes });
  const env = bindEnv(grant, identity, { secrets: request.secrets, audit });
  const permissions = bindPermissions(grant, identity, { cwd });
  const { cwd: cwdHandler, ...fsAsync } = fs.handlers;
  let revoked = false;
  // A function, not the variable: the check after an await must read it again.
  const isRevoked = (): boolean => revoked;
  return {
    handlers: {
      async: {
        ...fsAsync,
        ...permissions.handlers,
        fetch: async (args, signal) => {
          if (isRevoked()) throw new CallError('aborted', 'fetch was used after the call ended.');
          const { DEFAULT_FETCH_LIMITS, guardedFetch } = await loadFetchCapability();
          // The call may have ended while the capability loaded.
          if (isRevoked()) throw new CallError('aborted', 'fetch was used after the call ended.');
          const fetchLimits = {
            ...DEFAULT_FETCH_LIMITS,
            maxResponseBytes: limits.maxFetchBytes,
            maxRequestBytes: limits.maxFetchBytes,
            timeoutMs: Math.min(DEFAULT_FETCH_LIMITS.timeoutMs, limits.wallTimeMs),
          };
          return guardedFetch(args, {
            authorize: (hostname, port) => { checkNet(grant, hostname, port); },
            literalAddressGranted: (ip, port) => isLiteralAddressGranted(grant, ip, port),
            onAudit: (target, allowed, reason) => {
              audit.record({ ...identity, capability: 'net', target, allowed, ...(reason === undefined ? {} : { reason }) });
            },
            limits: fetchLimits,
            signal,
          });
        },
      },
      sync: { ...env.handlers, cwd: cwdHandler },
    },
    revoke() {
      revoked = true;
      fs.revoke();
      env.revoke();
      permissions.revoke();
    },
  };
}
