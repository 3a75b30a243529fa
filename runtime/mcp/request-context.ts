import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Caller } from '../auth/keys.ts';

/**
 * What the HTTP layer established about one HTTP request, carried to the MCP handlers of the
 * JSON-RPC messages it holds. The SDK hands a request's `AuthInfo` to every handler as
 * `extra.authInfo`; its `extra` record is the documented place for server data about the token.
 */
export interface McpRequestContext {
  /** The authenticated caller: grants and audit records are theirs. */
  readonly caller: Caller;
  /** Aborts when the client drops the HTTP request (its response stream is then undeliverable). */
  readonly signal: AbortSignal;
}

const CONTEXT_KEY = 'paddock';

/** Contexts this module issued: a handler trusts only these, never a look-alike object. */
const issued = new WeakSet<McpRequestContext>();

export function authInfoFor(context: McpRequestContext): AuthInfo {
  const frozen = Object.freeze({ ...context });
  issued.add(frozen);
  // The bearer key itself stays out: nothing below the HTTP layer needs it.
  return { token: '', clientId: context.caller.name, scopes: [...context.caller.scopes], extra: { [CONTEXT_KEY]: frozen } };
}

export function requestContextOf(authInfo: AuthInfo | undefined): McpRequestContext | undefined {
  const candidate = authInfo?.extra?.[CONTEXT_KEY];
  return typeof candidate === 'object' && candidate !== null && issued.has(candidate as McpRequestContext)
    ? candidate as McpRequestContext
    : undefined;
}
