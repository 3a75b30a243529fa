/**
 * The env capability of one call: `Deno.env.get/has/toObject` answered from the operator's
 * configured secrets, never from the process environment, bound to the call's grant.
 *
 * As in Deno 2: the grant is checked before the name is validated; a granted variable that is not
 * set reads as null (undefined in the guest); `toObject()` needs the whole env permission
 * (`env: true`), a list, even `["*"]`, is refused with `Requires env access`.
 */
import type { AuditSink, CallIdentity } from '../audit.ts';
import { GuestError } from '../errors.ts';
import { checkEnv } from '../grants/check.ts';
import type { Grant } from '../grants/grant.ts';
import { notCapable } from '../grants/not-capable.ts';
import type { SyncOps } from '../protocol.ts';
import { createCallScope } from './call-scope.ts';

export interface EnvCapabilityDeps {
  /** The operator's configured secrets: the only values a guest can read. */
  readonly secrets: Readonly<Record<string, string>>;
  readonly audit: AuditSink;
}

export interface EnvHandlers {
  readonly envGet: (args: SyncOps['envGet']['args']) => SyncOps['envGet']['result'];
  readonly envToObject: (args: SyncOps['envToObject']['args']) => SyncOps['envToObject']['result'];
}

export interface BoundEnv {
  readonly handlers: EnvHandlers;
  /** Ends the binding: every handler throws CallError('aborted') from then on. */
  revoke(): void;
}

/** The audit target of `toObject()`, which asks for every variable at once. */
export const ALL_VARIABLES_TARGET = '*';

export function bindEnv(grant: Grant, identity: CallIdentity, deps: EnvCapabilityDeps): BoundEnv {
  const scope = createCallScope(identity, deps.audit);
  // A snapshot in a Map: later changes to the config object do not reach a running call, and
  // names such as "__proto__" or "constructor" are only names.
  const secrets = new Map(Object.entries(deps.secrets).filter((entry) => typeof entry[1] === 'string'));

  return {
    handlers: {
      envGet(args) {
        scope.assertLive('envGet');
        const name: unknown = args.name;
        if (typeof name !== 'string') throw new GuestError('TypeError', 'Key must be a string.');
        try {
          checkEnv(grant, name);
        } catch (error) {
          scope.record('env', name, false, 'not granted');
          throw error;
        }
        scope.record('env', name, true);
        if (name === '') throw new GuestError('TypeError', 'Key is an empty string.');
        if (name.includes('=') || name.includes('\0')) {
          throw new GuestError('TypeError', `Key contains invalid characters: ${rustDebugString(name)}`);
        }
        return secrets.get(name) ?? null;
      },

      envToObject() {
        scope.assertLive('envToObject');
        if (grant.env !== true) {
          scope.record('env', ALL_VARIABLES_TARGET, false, 'not granted');
          throw notCapable('env');
        }
        scope.record('env', ALL_VARIABLES_TARGET, true);
        return Object.fromEntries(secrets);
      },
    },
    revoke: scope.revoke,
  };
}

/** A string as Rust's `{:?}` prints it, which is how Deno quotes a bad key: `"A\0B"`. */
function rustDebugString(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === '"' || char === '\\') out += `\\${char}`;
    else if (char === '\0') out += '\\0';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\u{${code.toString(16)}}`;
    else out += char;
  }
  return `${out}"`;
}
