/**
 * The guest runtime's entry. Evaluating the bundle defines only `__paddock_boot` (snapshot-safe:
 * no bridge call, no randomness, no timer at top level). Per call, the host installs the doors and
 * runs boot, which captures and deletes them, installs the Web APIs and `Deno`, and defines the
 * three functions the host grabs as References and then deletes.
 */
import { BRIDGE_GLOBALS } from '../protocol.ts';
import { installDoors, settle, type Doors } from './bridge.ts';
import { createConsole } from './console.ts';
import { Crypto, createCrypto } from './crypto.ts';
import { createDeno } from './deno.ts';
import { atob, btoa, TextDecoder, TextEncoder } from './encoding.ts';
import { DOMException } from './errors.ts';
import { AbortController, AbortSignal, CustomEvent, Event, EventTarget } from './events.ts';
import { fetch, Request, Response } from './fetch.ts';
import { Headers } from './headers.ts';
import { abort, invoke } from './invoke.ts';
import {
  ObjectDefineProperty, ObjectKeys, ReflectDeleteProperty, ReflectGetOwnPropertyDescriptor, TypeErrorCtor, globalThisRef,
} from './primordials.ts';
import { structuredClone } from './structured-clone.ts';
import { clearInterval, clearTimeout, queueMicrotask, setInterval, setTimeout } from './timers.ts';
import { URL, URLSearchParams } from './url.ts';

export const HOST_ENTRY_GLOBALS = { settle: BRIDGE_GLOBALS.settle, invoke: '__paddock_invoke', abort: '__paddock_abort' } as const;
const BOOT_GLOBAL = '__paddock_boot';

function takeDoor(name: string): (...args: never[]) => unknown {
  const descriptor = ReflectGetOwnPropertyDescriptor(globalThisRef, name);
  const door: unknown = descriptor?.value;
  ReflectDeleteProperty(globalThisRef, name);
  if (typeof door !== 'function') throw new TypeErrorCtor(`The host did not install ${name}.`);
  return door as (...args: never[]) => unknown;
}

/** Web IDL puts interfaces and functions on the global as writable, configurable, non-enumerable. */
function defineGlobal(name: string, value: unknown): void {
  ObjectDefineProperty(globalThisRef, name, { value, writable: true, enumerable: false, configurable: true });
}

/**
 * The Web API globals, by the name the global gets. The bundler names a class that refers to itself
 * `_X` (and the runtime is bundled without keepNames, whose per-function calls cost every isolate
 * ~0.35 ms to deserialize), so each function here gets its global's name back once, when the
 * runtime is evaluated (in the snapshot, not per call).
 */
const WEB_GLOBALS: Readonly<Record<string, unknown>> = {
  URL,
  URLSearchParams,
  TextEncoder,
  TextDecoder,
  atob,
  btoa,
  structuredClone,
  Crypto,
  DOMException,
  Event,
  EventTarget,
  CustomEvent,
  AbortController,
  AbortSignal,
  setTimeout,
  clearTimeout,
  setInterval,
  clearInterval,
  queueMicrotask,
  fetch,
  Request,
  Response,
  Headers,
};
for (const name of ObjectKeys(WEB_GLOBALS)) {
  const value = WEB_GLOBALS[name];
  if (typeof value === 'function' && value.name !== name) ObjectDefineProperty(value, 'name', { value: name, configurable: true });
}

function boot(): void {
  ReflectDeleteProperty(globalThisRef, BOOT_GLOBAL);
  const request = takeDoor(BRIDGE_GLOBALS.request);
  const call = takeDoor(BRIDGE_GLOBALS.call);
  const cancel = takeDoor(BRIDGE_GLOBALS.cancel);
  const doors: Doors = {
    request: (op, args) => (request as (op: string, args: unknown) => unknown)(op, args),
    call: (op, args) => (call as (op: string, args: unknown) => unknown)(op, args),
    cancel: (id) => (cancel as (id: number) => unknown)(id),
  };
  installDoors(doors);
  // WebAssembly memories live outside the isolate's heap limit (measured: 20 x 64 MiB memories
  // under a 16 MiB limit), so guest code gets no WebAssembly at all.
  ReflectDeleteProperty(globalThisRef, 'WebAssembly');

  for (const name of ObjectKeys(WEB_GLOBALS)) defineGlobal(name, WEB_GLOBALS[name]);
  defineGlobal('crypto', createCrypto());
  defineGlobal('console', createConsole());
  defineGlobal('self', globalThisRef);
  ObjectDefineProperty(globalThisRef, 'Deno', { value: createDeno(), writable: false, enumerable: false, configurable: false });

  // For the host only: it takes References to these and deletes the globals before user code runs.
  defineGlobal(HOST_ENTRY_GLOBALS.settle, function settleRequest(id: unknown, outcome: unknown): void { settle(id, outcome); });
  defineGlobal(HOST_ENTRY_GLOBALS.invoke, function invokeModule(input: unknown): Promise<unknown> { return invoke(input); });
  defineGlobal(HOST_ENTRY_GLOBALS.abort, function abortCall(reason: unknown): void { abort(reason); });
}

ObjectDefineProperty(globalThisRef, BOOT_GLOBAL, { value: boot, writable: false, enumerable: false, configurable: true });
