/**
 * Pins: every function a tool can reach from the globals the runtime defines (constructors, their
 * prototype methods, getters and setters, `Deno.*`, `console.*`) has the `name` Deno gives it. The
 * runtime is bundled without esbuild's keepNames (its `__name` calls cost every isolate ~0.35 ms of
 * CPU to deserialize), so a bundler rename of a user-visible function would show here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { denoEvaluate } from './helpers/deno.ts';
import { createGuest, evaluate, type Guest } from './helpers/fake-host.ts';

const WALK = `
const roots = ['URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'atob', 'btoa', 'structuredClone', 'Crypto', 'crypto',
  'DOMException', 'Event', 'EventTarget', 'CustomEvent', 'AbortController', 'AbortSignal', 'setTimeout', 'clearTimeout',
  'setInterval', 'clearInterval', 'queueMicrotask', 'console', 'fetch', 'Request', 'Response', 'Headers', 'Deno'];
const names = {};
const seen = new Set();
const visit = (value, path, depth) => {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value) || depth > 3) return;
  seen.add(value);
  if (typeof value === 'function') names[path] = value.name;
  for (const key of Object.getOwnPropertyNames(value).sort()) {
    if (key === 'constructor' || key === 'caller' || key === 'arguments') continue;
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor.get) names[path + '.' + key + ' (get)'] = descriptor.get.name;
    if (descriptor.set) names[path + '.' + key + ' (set)'] = descriptor.set.name;
    if ('value' in descriptor) visit(descriptor.value, path + '.' + key, depth + 1);
  }
};
for (const root of roots) visit(globalThis[root], root, 0);
return names;
`;

/**
 * Where Deno's names are artefacts of its own implementation (accessors its webidl layer defines
 * with a bare `get`/`set` name, env functions named after its internal ops), Paddock keeps the
 * names the language gives them.
 */
const DENO_IMPLEMENTATION_NAMES = [
  'AbortSignal.prototype.onabort (get): "get onabort" (Deno "get")',
  'AbortSignal.prototype.onabort (set): "set onabort" (Deno "set")',
  'Request.prototype.body (get): "get body" (Deno "get")',
  'Request.prototype.bodyUsed (get): "get bodyUsed" (Deno "get")',
  'Response.prototype.body (get): "get body" (Deno "get")',
  'Response.prototype.bodyUsed (get): "get bodyUsed" (Deno "get")',
  'Deno.env.delete: "delete" (Deno "deleteEnv")',
  'Deno.env.get: "envGet" (Deno "getEnv")',
  'Deno.env.set: "set" (Deno "setEnv")',
];

describe('function names a tool can see', () => {
  let guest: Guest;
  beforeAll(async () => { guest = await createGuest(); });
  afterAll(() => { guest.dispose(); });

  it('match Deno for every path both runtimes have', async () => {
    const [paddock, deno] = await Promise.all([evaluate(guest, WALK), denoEvaluate(WALK)]) as [Record<string, string>, Record<string, string>];
    const common = Object.keys(paddock).filter((path) => Object.hasOwn(deno, path));
    // The walk must reach far enough to mean something: constructors, methods, accessors, Deno.
    expect(common.length).toBeGreaterThan(200);
    expect(common).toEqual(expect.arrayContaining(['Headers.prototype.get', 'URL.prototype.href (get)', 'Deno.readTextFile', 'console.log']));
    const differing = common.filter((path) => paddock[path] !== deno[path]).map((path) => `${path}: ${JSON.stringify(paddock[path])} (Deno ${JSON.stringify(deno[path])})`);
    expect(differing.sort()).toEqual([...DENO_IMPLEMENTATION_NAMES].sort());
  });
});
