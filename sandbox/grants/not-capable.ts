/**
 * The one place denial messages are built. They match Deno 2 byte for byte (checked against real
 * Deno in test/sandbox/grants/deno-conformance.test.ts), e.g.
 * `Requires net access to "example.com:443", run again with the --allow-net flag`.
 */
import { GuestError } from '../errors.ts';
import type { PermissionName } from '../protocol.ts';

/**
 * Builds the NotCapable error Deno throws. `target` is already in Deno's display form (see
 * `netTarget` and `displayPath` in check.ts); leave it out for a whole-permission request such as
 * `Deno.env.toObject()`.
 */
export function notCapable(name: PermissionName, target?: string): GuestError {
  const access = target === undefined ? `${name} access` : `${name} access to ${quoteTarget(target)}`;
  return new GuestError('NotCapable', `Requires ${access}, run again with the --allow-${name} flag`);
}

// Deno quotes the target unless it is already bracketed as `<...>`.
function quoteTarget(target: string): string {
  return target.startsWith('<') && target.endsWith('>') ? target : `"${target}"`;
}
