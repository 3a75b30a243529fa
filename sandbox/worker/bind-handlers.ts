import type { AuditSink } from '../audit.ts';
import type { HostHandlers } from '../host/run-in-isolate.ts';
import type { CallRequest } from './messages.ts';

export interface BoundHandlers {
  handlers: HostHandlers;
  /** Called when the call ends: every capability refuses from then on. */
  revoke(): void;
}

/** Binds the capability host functions (net, fs, env, permissions) to one call's grant. */
export function bindHandlers(request: CallRequest, _audit: AuditSink): BoundHandlers {
  let revoked = false;
  return {
    handlers: {
      async: {},
      sync: {
        cwd: () => {
          if (revoked) throw new Error('revoked');
          return request.cwd;
        },
      },
    },
    revoke: () => { revoked = true; },
  };
}
