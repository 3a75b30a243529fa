import { createMiddleware } from 'hono/factory';
import type { KeyStore } from '../../auth/keys.ts';
import { hasScope } from '../../auth/keys.ts';
import type { Scope } from '../../config/schema.ts';
import type { AppEnv } from '../env.ts';
import { ProblemError } from '../problem.ts';

/** Resolves the bearer key to a caller, or answers 401. */
export const authenticate = (keys: KeyStore) =>
  createMiddleware<AppEnv>(async function authenticate(c, next) {
    const header = c.req.header('authorization');
    const caller = keys.verify(header);
    if (caller === undefined) {
      const detail = header === undefined
        ? 'Missing Authorization header; send "Authorization: Bearer <key>".'
        : 'The bearer key is malformed or unknown.';
      throw new ProblemError('unauthorized', detail, { headers: { 'www-authenticate': 'Bearer realm="paddock"' } });
    }
    c.set('caller', caller);
    c.set('log', c.var.log.child({ caller: caller.name }));
    await next();
  });

/** Answers 403 unless the authenticated caller holds `scope`. */
export const requireScope = (scope: Scope) =>
  createMiddleware<AppEnv>(async function requireScope(c, next) {
    if (!hasScope(c.var.caller, scope)) {
      throw new ProblemError('forbidden', `The key "${c.var.caller.name}" lacks the "${scope}" scope this route requires.`);
    }
    await next();
  });
