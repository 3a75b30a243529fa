import type { Logger } from '../observability/logger.ts';
import type { Caller } from '../auth/keys.ts';

/** Request-scoped values, each set by exactly one middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    log: Logger;
    caller: Caller;
  };
}
