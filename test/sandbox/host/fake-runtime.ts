/**
 * A minimal stand-in for the guest runtime with the same boot contract (sandbox/protocol.ts), so
 * the isolate host's limits and lifecycle are tested on their own.
 */
import { createHash } from 'node:crypto';

export const FAKE_RUNTIME = {
  hash: 'fake-runtime-1',
  code: String.raw`
Object.defineProperty(globalThis, '__paddock_boot', { configurable: true, value: function () {
  const request = globalThis.__paddock_request, call = globalThis.__paddock_call;
  delete globalThis.__paddock_request; delete globalThis.__paddock_call; delete globalThis.__paddock_cancel;
  delete globalThis.__paddock_boot;
  const waiting = new Map();
  globalThis.__paddock_settle = (id, outcome) => {
    const w = waiting.get(id); waiting.delete(id);
    if (outcome.ok) w.resolve(outcome.value);
    else { const e = new Error(outcome.error.message); e.name = outcome.error.name; w.reject(e); }
  };
  globalThis.host = (op, args) => new Promise((resolve, reject) => waiting.set(request(op, args), { resolve, reject }));
  globalThis.hostSync = (op, args) => call(op, args);
  globalThis.__paddock_invoke = async (input) => {
    try {
      const m = globalThis.__paddock_module;
      const v = typeof m.default === 'function' ? await m.default(input.params, {}) : await m.default;
      if (input.kind === 'exec') return { result: v === undefined ? null : v };
      return typeof v === 'string' ? { content: v, isError: false, metadata: null, terminate: false } : v;
    } catch (e) { return { error: { name: e.name, message: e.message } }; }
  };
  globalThis.__paddock_abort = () => { globalThis.aborted = true; };
}});`,
};

/** Wraps a function body as the IIFE bundle shape the host runs, hashed as the bundler hashes (content). */
export function fakeBundle(body: string): { code: string; hash: string; filename: string } {
  const code = `var __paddock_module = { default: async (params) => { ${body} } };`;
  return { code, hash: createHash('sha256').update(code).digest('hex'), filename: 'tools/test.ts' };
}
