/**
 * What every capability bound to one call shares: who the call is (for the audit trail) and whether
 * the call is still running. After `revoke()` every handler throws, so a reference that outlives
 * its call (a stray promise, a leaked function) can do nothing.
 */
import type { AuditSink, CallIdentity } from '../audit.ts';
import { CallError } from '../errors.ts';
import type { PermissionName } from '../protocol.ts';

export interface CallScope {
  /** Throws CallError('aborted') once the call has ended. */
  readonly assertLive: (operation: string) => void;
  /** One audit record: a use (`allowed`) or a denial, with the target as the guest wrote it. */
  readonly record: (capability: PermissionName, target: string, allowed: boolean, reason?: string) => void;
  readonly revoke: () => void;
}

export function createCallScope(identity: CallIdentity, audit: AuditSink | undefined): CallScope {
  let revoked = false;
  return {
    assertLive: (operation) => {
      if (revoked) throw new CallError('aborted', `${operation} was used after the call ended.`, { operation });
    },
    record: (capability, target, allowed, reason) => {
      audit?.record({
        callId: identity.callId,
        tool: identity.tool,
        caller: identity.caller,
        sessionId: identity.sessionId,
        capability,
        target,
        allowed,
        reason,
      });
    },
    revoke: () => {
      revoked = true;
    },
  };
}
