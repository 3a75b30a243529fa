/** setTimeout, setInterval, their clear functions and queueMicrotask, on the host async `sleep` op: each pending timer is one request. */
import { hostCancel, hostRequest } from './bridge.ts';
import {
  MapPrototypeClear, MapPrototypeDelete, MapPrototypeForEach, MapPrototypeGet, MapPrototypeSet, NumberIsFinite,
  PromisePrototypeThen, PromiseResolve, ReflectApply, SafeMap, TypeErrorCtor, ArrayPrototypeSlice, MathMax, MathTrunc,
  toNumber, SymbolToPrimitive, SymbolDispose,
} from './primordials.ts';
import { reportUncaught } from './uncaught.ts';

interface Timer {
  requestId: number;
  callback: unknown;
  args: unknown[];
  delay: number;
  repeat: boolean;
}

const timers = new SafeMap<number, Timer>();
let nextTimerId = 1;

function normalizeDelay(delay: unknown): number {
  const ms = toNumber(delay);
  return NumberIsFinite(ms) ? MathMax(0, MathTrunc(ms)) : 0;
}

function arm(id: number, timer: Timer): void {
  const { id: requestId, promise } = hostRequest('sleep', { ms: timer.delay });
  timer.requestId = requestId;
  void PromisePrototypeThen(promise, () => { fire(id, timer); }, () => { /* cancelled or refused: the timer simply never fires */ });
}

function fire(id: number, timer: Timer): void {
  if (MapPrototypeGet(timers, id) !== timer) return; // cleared meanwhile
  if (timer.repeat) arm(id, timer);
  else MapPrototypeDelete(timers, id);
  try {
    if (typeof timer.callback === 'function') ReflectApply(timer.callback, undefined, timer.args);
    // Deno evaluates string callbacks as code; that is eval under another name, which we do not offer.
  } catch (error) {
    reportUncaught(error);
  }
}

/**
 * What setTimeout/setInterval return. Deno 2 returns Node-style Timeout objects that convert to
 * their numeric id, so both `clearTimeout(t)` and `clearTimeout(+t)` work; we do the same.
 */
let timeoutId: (timeout: Timeout) => number;

class Timeout {
  readonly #id: number;
  #ref = true;

  constructor(id: number) {
    this.#id = id;
  }

  ref(): this { this.#ref = true; return this; }
  unref(): this { this.#ref = false; return this; } // there is no event loop to keep alive; kept for API shape
  hasRef(): boolean { return this.#ref; }
  close(): this { clearTimeout(this.#id); return this; }

  refresh(): this {
    const timer = MapPrototypeGet(timers, this.#id);
    if (timer !== undefined) {
      hostCancel(timer.requestId);
      arm(this.#id, timer);
    }
    return this;
  }

  [SymbolToPrimitive](): number { return this.#id; }
  [SymbolDispose](): void { clearTimeout(this.#id); }

  static {
    timeoutId = (timeout: Timeout): number => timeout.#id;
  }
}

function schedule(callback: unknown, delay: unknown, args: unknown[], repeat: boolean): Timeout {
  if (typeof callback !== 'function') throw new TypeErrorCtor('Callback must be a function.');
  const id = nextTimerId++;
  const timer: Timer = { requestId: -1, callback, args, delay: normalizeDelay(delay), repeat };
  MapPrototypeSet(timers, id, timer);
  arm(id, timer);
  return new Timeout(id);
}

export function setTimeout(callback: unknown, delay?: unknown, ...args: unknown[]): Timeout {
  return schedule(callback, delay, ArrayPrototypeSlice(args), false);
}

export function setInterval(callback: unknown, delay?: unknown, ...args: unknown[]): Timeout {
  return schedule(callback, delay, ArrayPrototypeSlice(args), true);
}

export function clearTimeout(handle?: unknown): void {
  const id = handle instanceof Timeout ? timeoutId(handle) : toNumber(handle);
  const timer = MapPrototypeGet(timers, id);
  if (timer === undefined) return;
  MapPrototypeDelete(timers, id);
  hostCancel(timer.requestId);
}

/** Its own function, as on the Web: `clearInterval.name` is "clearInterval". */
export function clearInterval(handle?: unknown): void {
  clearTimeout(handle);
}

/** Cancels every pending timer, e.g. when the invocation is aborted. */
export function clearAllTimers(): void {
  MapPrototypeForEach(timers, (timer) => { hostCancel(timer.requestId); });
  MapPrototypeClear(timers);
}

export function queueMicrotask(callback: unknown): void {
  if (typeof callback !== 'function') throw new TypeErrorCtor("Failed to execute 'queueMicrotask': Argument 1 is not a function");
  void PromisePrototypeThen(PromiseResolve(undefined), () => {
    try {
      ReflectApply(callback, undefined, []);
    } catch (error) {
      reportUncaught(error);
    }
  });
}
