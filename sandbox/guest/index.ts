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
  ObjectDefineProperty, ReflectDeleteProperty, ReflectGetOwnPropertyDescriptor, TypeErrorCtor, globalThisRef,
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

  defineGlobal('URL', URL);
  defineGlobal('URLSearchParams', URLSearchParams);
  defineGlobal('TextEncoder', TextEncoder);
  defineGlobal('TextDecoder', TextDecoder);
  defineGlobal('atob', atob);
  defineGlobal('btoa', btoa);
  defineGlobal('structuredClone', structuredClone);
  defineGlobal('Crypto', Crypto);
  defineGlobal('crypto', createCrypto());
  defineGlobal('DOMException', DOMException);
  defineGlobal('Event', Event);
  defineGlobal('EventTarget', EventTarget);
  defineGlobal('CustomEvent', CustomEvent);
  defineGlobal('AbortController', AbortController);
  defineGlobal('AbortSignal', AbortSignal);
  defineGlobal('setTimeout', setTimeout);
  defineGlobal('clearTimeout', clearTimeout);
  defineGlobal('setInterval', setInterval);
  defineGlobal('clearInterval', clearInterval);
  defineGlobal('queueMicrotask', queueMicrotask);
  defineGlobal('console', createConsole());
  defineGlobal('fetch', fetch);
  defineGlobal('Request', Request);
  defineGlobal('Response', Response);
  defineGlobal('Headers', Headers);
  defineGlobal('self', globalThisRef);
  ObjectDefineProperty(globalThisRef, 'Deno', { value: createDeno(), writable: false, enumerable: false, configurable: false });

  // For the host only: it takes References to these and deletes the globals before user code runs.
  defineGlobal(HOST_ENTRY_GLOBALS.settle, function settleRequest(id: unknown, outcome: unknown): void { settle(id, outcome); });
  defineGlobal(HOST_ENTRY_GLOBALS.invoke, function invokeModule(input: unknown): Promise<unknown> { return invoke(input); });
  defineGlobal(HOST_ENTRY_GLOBALS.abort, function abortCall(reason: unknown): void { abort(reason); });
}

ObjectDefineProperty(globalThisRef, BOOT_GLOBAL, { value: boot, writable: false, enumerable: false, configurable: true });
