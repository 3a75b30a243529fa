import type { AuditSink } from '../audit.ts';
import { bindEnv } from '../capabilities/env.ts';
import { bindFs } from '../capabilities/fs.ts';
import { DEFAULT_FETCH_LIMITS, guardedFetch } from '../capabilities/net/fetch.ts';
import { bindPermissions } from '../capabilities/permissions.ts';
import { CallError } from '../errors.ts';
import { checkNet, isLiteralAddressGranted } from '../grants/check.ts';
import type { Grant } from '../grants/grant.ts';
import type { HostHandlers } from '../host/run-in-isolate.ts';
import type { CallRequest } from './messages.ts';

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
  const fetchLimits = {
    ...DEFAULT_FETCH_LIMITS,
    maxResponseBytes: limits.maxFetchBytes,
    maxRequestBytes: limits.maxFetchBytes,
    timeoutMs: Math.min(DEFAULT_FETCH_LIMITS.timeoutMs, limits.wallTimeMs),
  };
  return {
    handlers: {
      async: {
        ...fsAsync,
        ...permissions.handlers,
        fetch: (args, signal) => {
          if (revoked) return Promise.reject(new CallError('aborted', 'fetch was used after the call ended.'));
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
