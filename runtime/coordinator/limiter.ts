/** Too many calls: the caller should retry after `retryAfterSeconds`. */
export class OverloadedError extends Error {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.name = new.target.name;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * Bounds the calls running at once; the next ones wait in a bounded FIFO queue; beyond it a call
 * is refused at once (HTTP 429) rather than piling up memory and latency.
 */
export class ConcurrencyLimiter {
  readonly #maxRunning: number;
  readonly #maxQueued: number;
  readonly #waiting: { resolve: () => void; reject: (error: Error) => void; signal?: AbortSignal | undefined; onAbort: () => void }[] = [];
  #running = 0;

  constructor(maxRunning: number, maxQueued: number) {
    this.#maxRunning = maxRunning;
    this.#maxQueued = maxQueued;
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  /** Resolves with a release function once the call may run. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.#running < this.#maxRunning) {
      this.#running++;
      return this.#releaser();
    }
    if (this.#waiting.length >= this.#maxQueued) {
      throw new OverloadedError(`Too many calls: ${this.#running} running and ${this.#waiting.length} queued (the limits). Retry shortly.`, 1);
    }
    signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const entry = {
        resolve, reject, signal,
        onAbort: () => {
          const index = this.#waiting.indexOf(entry);
          if (index !== -1) this.#waiting.splice(index, 1);
          reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted while queued'));
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      this.#waiting.push(entry);
    });
    return this.#releaser();
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next === undefined) {
        this.#running--;
        return;
      }
      next.signal?.removeEventListener('abort', next.onAbort);
      next.resolve(); // the slot passes straight to the next call
    };
  }
}
