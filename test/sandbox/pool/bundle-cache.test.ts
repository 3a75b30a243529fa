/**
 * Pins: a worker receives a bundle's code once and holds a bounded set (least recently used out,
 * by count and by bytes); what falls out is named so the worker drops it too.
 */
import { describe, expect, it } from 'vitest';
import { WorkerBundles } from '../../../sandbox/pool/bundle-cache.ts';

describe('WorkerBundles', () => {
  it('sends a bundle the first time only', () => {
    const bundles = new WorkerBundles({ maxBundles: 4, maxBytes: 1000 });
    expect(bundles.use('a', 10)).toEqual({ send: true, keep: true, forget: [] });
    expect(bundles.use('a', 10)).toEqual({ send: false, keep: true, forget: [] });
  });

  it('forgets the least recently used bundle past the count bound', () => {
    const bundles = new WorkerBundles({ maxBundles: 2, maxBytes: 1000 });
    bundles.use('a', 10);
    bundles.use('b', 10);
    bundles.use('a', 10);
    expect(bundles.use('c', 10)).toEqual({ send: true, keep: true, forget: ['b'] });
    expect(bundles.use('a', 10).send).toBe(false);
    expect(bundles.use('b', 10)).toEqual({ send: true, keep: true, forget: ['c'] });
    expect(bundles.size).toBe(2);
  });

  it('forgets as many as the byte bound needs, and never holds a bundle larger than the bound', () => {
    const bundles = new WorkerBundles({ maxBundles: 10, maxBytes: 100 });
    bundles.use('a', 40);
    bundles.use('b', 40);
    expect(bundles.use('c', 90)).toEqual({ send: true, keep: true, forget: ['a', 'b'] });
    expect(bundles.use('huge', 101)).toEqual({ send: true, keep: false, forget: [] });
    expect(bundles.use('huge', 101).send).toBe(true);
    expect(bundles.use('c', 90).send).toBe(false);
  });

  it('sends a bundle again once the worker said it lacks it', () => {
    const bundles = new WorkerBundles({ maxBundles: 2, maxBytes: 100 });
    bundles.use('a', 10);
    bundles.lost('a');
    expect(bundles.use('a', 10).send).toBe(true);
    expect(bundles.size).toBe(1);
  });
});
