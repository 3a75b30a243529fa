/** Per-call limits. Operators set the defaults in config; a call may only lower them. */
export interface CallLimits {
  /** Wall-clock budget for the whole call, in ms. @defaultValue 10_000 */
  wallTimeMs: number;
  /** CPU time the isolate may burn, in ms. @defaultValue 5_000 */
  cpuTimeMs: number;
  /** V8 heap for the isolate, in MiB (isolated-vm's limit; a guideline the worker's RSS ceiling backs up). @defaultValue 64 */
  heapMiB: number;
  /** Bytes of result, logs and ctx.update text together that may leave the isolate. @defaultValue 1_048_576 */
  maxOutputBytes: number;
  /** Largest response body a guest fetch may read. @defaultValue 10_485_760 */
  maxFetchBytes: number;
  /** Largest file a guest may read or write in one operation. @defaultValue 10_485_760 */
  maxFileBytes: number;
  /** Host operations (fetch, fs, timers, ...) one call may start in total. @defaultValue 10_000 */
  maxHostOps: number;
  /** Host operations one call may have pending at once. @defaultValue 256 */
  maxPendingOps: number;
}

export const DEFAULT_LIMITS: Readonly<CallLimits> = Object.freeze({
  wallTimeMs: 10_000,
  cpuTimeMs: 5_000,
  heapMiB: 64,
  maxOutputBytes: 1_048_576,
  maxFetchBytes: 10_485_760,
  maxFileBytes: 10_485_760,
  maxHostOps: 10_000,
  maxPendingOps: 256,
});

/** Ceilings no override can pass, whatever the operator or caller asks. */
const HARD_MAX: Readonly<CallLimits> = Object.freeze({
  wallTimeMs: 15 * 60_000,
  cpuTimeMs: 15 * 60_000,
  heapMiB: 4096,
  maxOutputBytes: 64 * 1_048_576,
  maxFetchBytes: 1024 * 1_048_576,
  maxFileBytes: 1024 * 1_048_576,
  maxHostOps: 1_000_000,
  maxPendingOps: 10_000,
});

const MIN: Readonly<Partial<CallLimits>> = { heapMiB: 8, wallTimeMs: 1, cpuTimeMs: 1 };

/** Base limits with overrides applied, each clamped to [minimum, hard maximum]. */
export function resolveLimits(base: Readonly<CallLimits>, overrides: Partial<CallLimits> = {}): Readonly<CallLimits> {
  const resolved = { ...base };
  for (const key of Object.keys(base) as (keyof CallLimits)[]) {
    const value = overrides[key];
    if (value !== undefined && Number.isFinite(value)) resolved[key] = Math.floor(value);
    resolved[key] = Math.min(Math.max(resolved[key], MIN[key] ?? 0), HARD_MAX[key]);
  }
  return Object.freeze(resolved);
}

/** Only lowers: a request may narrow the operator's limits, never widen them. */
export function narrowLimits(base: Readonly<CallLimits>, requested: Partial<CallLimits>): Readonly<CallLimits> {
  const narrowed: Partial<CallLimits> = {};
  for (const key of Object.keys(base) as (keyof CallLimits)[]) {
    const value = requested[key];
    if (value !== undefined) narrowed[key] = Math.min(value, base[key]);
  }
  return resolveLimits(base, narrowed);
}
