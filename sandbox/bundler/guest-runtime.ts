/**
 * Builds the guest runtime (sandbox/guest/index.ts) into one classic script for the isolate
 * snapshot. The esbuild output is wrapped in a strict function whose parameters are the
 * ECMAScript globals captured when the script is evaluated: a tool that later replaces
 * `globalThis.Uint8Array` or `globalThis.Error` cannot change what the runtime's code refers to,
 * and strict mode keeps V8 call sites from handing runtime functions to
 * `Error.prepareStackTrace` or `fn.caller`.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { GuestToolResult } from '../protocol.ts';

/**
 * The globals the booted runtime defines for the host (besides BRIDGE_GLOBALS.settle). The host
 * takes a Reference to each and deletes the global before evaluating the user's bundle.
 * Mirrors HOST_ENTRY_GLOBALS in sandbox/guest/index.ts (guest code cannot import this file).
 */
export const GUEST_ENTRY_GLOBALS = {
  boot: '__paddock_boot',
  invoke: '__paddock_invoke',
  abort: '__paddock_abort',
  /** Where the user's bundle (esbuild `globalName`) puts its module namespace. */
  module: '__paddock_module',
} as const;

/** The argument of `__paddock_invoke`, copied into the isolate. */
export type GuestInvokeInput =
  | { kind: 'tool'; params: unknown; callId: string; sessionId: string | null }
  | { kind: 'exec' }
  | { kind: 'describe' };

/** A thrown error, as the guest reports it: the error's class name and message, nothing else. */
export interface GuestThrown { error: { name: string; message: string } }

/** What `__paddock_invoke` resolves to (it never rejects for a tool's own failure). */
export type GuestInvokeOutput = GuestToolResult | { result: unknown } | GuestThrown;

const ENTRY = fileURLToPath(new URL('../guest/index.ts', import.meta.url));

/** Globals the runtime may name directly; each is bound once, at evaluation time. */
const CAPTURED_GLOBALS = [
  'Object', 'Function', 'Array', 'Number', 'String', 'Boolean', 'Symbol', 'BigInt', 'Date', 'Promise', 'RegExp',
  'Error', 'TypeError', 'RangeError', 'SyntaxError', 'EvalError', 'ReferenceError', 'URIError', 'JSON', 'Math', 'Reflect',
  'Map', 'Set', 'WeakMap', 'WeakSet', 'ArrayBuffer', 'SharedArrayBuffer', 'DataView',
  'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array',
  'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array',
  'parseInt', 'parseFloat', 'isNaN', 'isFinite', 'decodeURIComponent', 'encodeURIComponent', 'globalThis',
] as const;

let cached: Promise<string> | undefined;

/** The runtime as one ES2024 script (no imports); evaluating it defines only `__paddock_boot`. Built once per process. */
export function buildGuestRuntime(): Promise<string> {
  cached ??= bundle().catch((error: unknown) => {
    cached = undefined; // let a later call retry instead of caching the failure
    throw error;
  });
  return cached;
}

async function bundle(): Promise<string> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'neutral',
    target: 'es2024',
    // No keepNames: its __name call per function cost every isolate ~0.2 ms of CPU to deserialize
    // (measured). The names a tool can see are restored where the bundler renames (sandbox/guest/index.ts)
    // and pinned against Deno's by test/sandbox/guest/names.test.ts.
    keepNames: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error('esbuild produced no output for the guest runtime.');
  const names = CAPTURED_GLOBALS.join(', ');
  // `typeof` guards: a snapshot context may lack some (SharedArrayBuffer is absent there).
  const values = CAPTURED_GLOBALS.map((name) => `typeof ${name} === 'undefined' ? undefined : ${name}`).join(',\n  ');
  return `(function (${names}) {\n"use strict";\n${output.text}\n})(\n  ${values}\n);\n`;
}
