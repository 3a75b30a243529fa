/**
 * Which tool bundles one worker holds, so a call sends its bundle's code only the first time that
 * worker sees it. Least recently used first out, bounded by count and by bytes of source; what
 * falls out is named in the next call's `forget`, and the worker drops the source and its V8 code
 * cache. A replacement worker starts with an empty record.
 */
export interface BundleCacheLimits {
  maxBundles: number;
  maxBytes: number;
}

export const DEFAULT_BUNDLE_CACHE: Readonly<BundleCacheLimits> = Object.freeze({ maxBundles: 256, maxBytes: 32 * 1_048_576 });

export class WorkerBundles {
  readonly #limits: BundleCacheLimits;
  /** hash -> bytes of source, oldest use first (Map keeps insertion order). */
  readonly #held = new Map<string, number>();
  #bytes = 0;

  constructor(limits: BundleCacheLimits = DEFAULT_BUNDLE_CACHE) {
    this.#limits = limits;
  }

  /**
   * Records that the worker is about to run `hash`. Returns whether its code must travel with the
   * call, and the bundles the worker must drop to stay within bounds.
   */
  use(hash: string, bytes: number): { send: boolean; keep: boolean; forget: string[] } {
    const held = this.#held.get(hash);
    if (held !== undefined) {
      this.#held.delete(hash);
      this.#held.set(hash, held);
      return { send: false, keep: true, forget: [] };
    }
    // Larger than the whole cache: send it each time, never hold it.
    if (bytes > this.#limits.maxBytes) return { send: true, keep: false, forget: [] };
    const forget: string[] = [];
    for (const [oldest, oldestBytes] of this.#held) {
      if (this.#held.size < this.#limits.maxBundles && this.#bytes + bytes <= this.#limits.maxBytes) break;
      this.#held.delete(oldest);
      this.#bytes -= oldestBytes;
      forget.push(oldest);
    }
    this.#held.set(hash, bytes);
    this.#bytes += bytes;
    return { send: true, keep: true, forget };
  }

  /** The worker said it lacks `hash`: the next use sends it again. */
  lost(hash: string): void {
    const bytes = this.#held.get(hash);
    if (bytes === undefined) return;
    this.#held.delete(hash);
    this.#bytes -= bytes;
  }

  get size(): number {
    return this.#held.size;
  }
}
