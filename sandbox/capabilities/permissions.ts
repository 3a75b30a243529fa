/**
 * The permissions capability of one call: `Deno.permissions.query` answered from the call's grant
 * (see grants/permission-state.ts for what Deno answers and why). A query reveals only what the
 * call's own grant already says, so it is neither a use nor a denial, and it is not audited.
 */
import { permissionState } from '../grants/permission-state.ts';
import type { Grant } from '../grants/grant.ts';
import type { CallIdentity } from '../audit.ts';
import type { AsyncOps } from '../protocol.ts';
import { createCallScope } from './call-scope.ts';

export interface PermissionsCapabilityDeps {
  /** The call's working directory (absolute): relative paths in descriptors resolve against it. */
  readonly cwd: string;
}

export interface PermissionsHandlers {
  readonly permissionsQuery: (args: AsyncOps['permissionsQuery']['args']) => Promise<AsyncOps['permissionsQuery']['result']>;
}

export interface BoundPermissions {
  readonly handlers: PermissionsHandlers;
  /** Ends the binding: the handler throws CallError('aborted') from then on. */
  revoke(): void;
}

export function bindPermissions(grant: Grant, identity: CallIdentity, deps: PermissionsCapabilityDeps): BoundPermissions {
  const scope = createCallScope(identity, undefined);
  return {
    handlers: {
      async permissionsQuery(descriptor) {
        scope.assertLive('permissionsQuery');
        const status = await permissionState(grant, descriptor, { cwd: deps.cwd });
        return { state: status.state, partial: status.partial };
      },
    },
    revoke: scope.revoke,
  };
}
