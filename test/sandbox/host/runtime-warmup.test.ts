/**
 * Pins: the warm-up workload that compiles the runtime's common paths into the snapshot and the
 * code cache really runs to its end against the real runtime (a broken step would silently warm
 * nothing), and leaves nothing in isolates made from the snapshot.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildGuestRuntime } from '../../../sandbox/bundler/guest-runtime.ts';
import { createRuntimeSnapshot, prepareIsolate } from '../../../sandbox/host/prepared-isolate.ts';
import { RUNTIME_WARMUP } from '../../../sandbox/host/runtime-warmup.ts';
import { ivm } from '../../../sandbox/host/transfer.ts';

describe('RUNTIME_WARMUP', () => {
  it('runs every step against the real runtime: fetch, URL, console, Deno, timers, update, exec, describe', async () => {
    const code = await buildGuestRuntime();
    const isolate = new ivm.Isolate({ memoryLimit: 64 });
    try {
      const context = await isolate.createContext();
      await context.eval(code);
      await context.eval(RUNTIME_WARMUP);
      expect(await context.eval('globalThis.__paddock_warmup_done')).toBe('ok');
    } finally {
      isolate.dispose();
    }
  });

  it('leaves no trace in isolates made from the snapshot it warmed', async () => {
    const code = await buildGuestRuntime();
    const runtime = { code, hash: createHash('sha256').update(code).digest('hex') };
    const snapshot = await createRuntimeSnapshot(runtime, 64);
    try {
      const prepared = await prepareIsolate({ ...runtime, snapshot }, 64);
      try {
        expect(prepared.context.evalSync('[typeof __paddock_warmup_done, typeof __paddock_module, typeof __paddock_request].join()')).toBe('undefined,undefined,undefined');
      } finally {
        prepared.isolate.dispose();
      }
    } finally {
      snapshot.release();
    }
  });
});
