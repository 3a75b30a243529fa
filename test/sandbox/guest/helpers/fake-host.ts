/**
 * A small fake host for guest-runtime tests: a real isolated-vm isolate, the three doors as
 * Callbacks with canned behaviour, settling through a Reference to __paddock_settle, exactly as
 * the contract in sandbox/bundler/guest-runtime.ts and sandbox/protocol.ts describes.
 */
import ivm from 'isolated-vm';
import type { AsyncOp, AsyncOps, BridgeError, BridgeOutcome, SyncOp, SyncOps } from '../../../../sandbox/protocol.ts';
import { BRIDGE_GLOBALS } from '../../../../sandbox/protocol.ts';
import { buildGuestRuntime, GUEST_ENTRY_GLOBALS, type GuestInvokeInput, type GuestInvokeOutput } from '../../../../sandbox/bundler/guest-runtime.ts';

/** Thrown by a fake op to make the host answer with a BridgeError. */
export class HostFailure extends Error {
  readonly bridgeName: string;
  constructor(bridgeName: string, message: string) {
    super(message);
    this.bridgeName = bridgeName;
  }
}

export type AsyncHandlers = { [Op in AsyncOp]?: (args: AsyncOps[Op]['args']) => AsyncOps[Op]['result'] | Promise<AsyncOps[Op]['result']> };
export type SyncHandlers = { [Op in SyncOp]?: (args: SyncOps[Op]['args']) => SyncOps[Op]['result'] };

export interface GuestOptions {
  async?: AsyncHandlers;
  sync?: SyncHandlers;
  /** Boot from this snapshot instead of evaluating the runtime script in the context. */
  snapshot?: ivm.ExternalCopy<ArrayBuffer>;
}

export interface Guest {
  readonly isolate: ivm.Isolate;
  readonly context: ivm.Context;
  readonly logs: { level: string; text: string }[];
  readonly requests: { op: string; args: unknown }[];
  readonly cancelled: number[];
  /** Evaluates a user module: `code` is the body of its async default export (exec mode). */
  exec(code: string): Promise<GuestInvokeOutput>;
  /** Evaluates a full user bundle (assigning __paddock_module), then invokes it. */
  invoke(bundle: string, input: GuestInvokeInput | { kind: string }): Promise<GuestInvokeOutput>;
  abort(reason: string): Promise<void>;
  dispose(): void;
}

const DEFAULT_SYNC: SyncHandlers = {
  envGet: () => null,
  envToObject: () => ({}),
  cwd: () => '/work',
  randomBytes: ({ length }) => {
    const bytes = new Uint8Array(length);
    for (let i = 0; i < length; i++) bytes[i] = (i * 37 + 11) & 0xff;
    return bytes;
  },
  log: () => null,
};

const DEFAULT_ASYNC: AsyncHandlers = {
  sleep: ({ ms }) => new Promise((resolve) => setTimeout(() => { resolve(null); }, ms)),
  update: () => null,
};

function toBridgeError(error: unknown): BridgeError {
  if (error instanceof HostFailure) return { name: error.bridgeName, message: error.message };
  return { name: 'Error', message: error instanceof Error ? error.message : String(error) };
}

let snapshotPromise: Promise<ivm.ExternalCopy<ArrayBuffer>> | undefined;

/** One snapshot per test process, as the isolate pool will make one per worker. */
export function runtimeSnapshot(): Promise<ivm.ExternalCopy<ArrayBuffer>> {
  snapshotPromise ??= buildGuestRuntime().then((code) => ivm.Isolate.createSnapshot([{ code, filename: 'paddock-guest-runtime.js' }]));
  return snapshotPromise;
}

export async function createGuest(options: GuestOptions = {}): Promise<Guest> {
  const snapshot = options.snapshot ?? (await runtimeSnapshot());
  const isolate = new ivm.Isolate({ memoryLimit: 64, snapshot });
  const context = await isolate.createContext();
  const logs: { level: string; text: string }[] = [];
  const requests: { op: string; args: unknown }[] = [];
  const cancelled: number[] = [];
  const asyncHandlers = { ...DEFAULT_ASYNC, ...options.async } as Record<string, ((args: unknown) => unknown) | undefined>;
  const syncHandlers = { ...DEFAULT_SYNC, ...options.sync } as Record<string, ((args: unknown) => unknown) | undefined>;
  const open = new Set<number>();
  let settleRef: ivm.Reference | null = null;
  let nextId = 1;

  const settle = (id: number, outcome: BridgeOutcome): void => {
    if (!open.delete(id) || settleRef === null || isolate.isDisposed) return;
    settleRef.apply(undefined, [id, outcome], { arguments: { copy: true } }).catch(() => { /* context gone */ });
  };

  await context.global.set(BRIDGE_GLOBALS.request, new ivm.Callback((op: string, args: unknown) => {
    const id = nextId++;
    requests.push({ op, args });
    open.add(id);
    const handler = asyncHandlers[op];
    Promise.resolve()
      .then(() => {
        if (handler === undefined) throw new HostFailure('Error', `no fake for async op ${op}`);
        return handler(args);
      })
      .then((value) => { settle(id, { ok: true, value: value ?? null }); }, (error: unknown) => { settle(id, { ok: false, error: toBridgeError(error) }); });
    return id;
  }));
  await context.global.set(BRIDGE_GLOBALS.call, new ivm.Callback((op: string, args: unknown): BridgeOutcome => {
    if (op === 'log') {
      const { level, text } = args as { level: string; text: string };
      logs.push({ level, text });
    }
    const handler = syncHandlers[op];
    if (handler === undefined) return { ok: false, error: { name: 'Error', message: `no fake for sync op ${op}` } };
    try {
      return { ok: true, value: handler(args) ?? null };
    } catch (error) {
      return { ok: false, error: toBridgeError(error) };
    }
  }));
  await context.global.set(BRIDGE_GLOBALS.cancel, new ivm.Callback((id: number) => {
    cancelled.push(id);
    settle(id, { ok: false, error: { name: 'AbortError', message: 'The operation was aborted.' } });
  }));

  await context.eval(`${GUEST_ENTRY_GLOBALS.boot}()`);
  settleRef = await context.global.get(BRIDGE_GLOBALS.settle, { reference: true });
  const invokeRef: ivm.Reference = await context.global.get(GUEST_ENTRY_GLOBALS.invoke, { reference: true });
  const abortRef: ivm.Reference = await context.global.get(GUEST_ENTRY_GLOBALS.abort, { reference: true });
  for (const name of [BRIDGE_GLOBALS.settle, GUEST_ENTRY_GLOBALS.invoke, GUEST_ENTRY_GLOBALS.abort]) await context.global.delete(name);

  // Inputs are typed loosely on purpose: tests also send malformed ones.
  const invokeWith = async (input: GuestInvokeInput | { kind: string }): Promise<GuestInvokeOutput> =>
    invokeRef.apply(undefined, [input], { arguments: { copy: true }, result: { promise: true, copy: true }, timeout: 5_000 }) as Promise<GuestInvokeOutput>;

  return {
    isolate,
    context,
    logs,
    requests,
    cancelled,
    async exec(code: string): Promise<GuestInvokeOutput> {
      await context.eval(`var ${GUEST_ENTRY_GLOBALS.module} = (() => ({ default: async function () {\n${code}\n} }))();`, { timeout: 5_000 });
      return invokeWith({ kind: 'exec' });
    },
    async invoke(bundle: string, input: GuestInvokeInput | { kind: string }): Promise<GuestInvokeOutput> {
      await context.eval(bundle, { timeout: 5_000 });
      return invokeWith(input);
    },
    async abort(reason: string): Promise<void> {
      await abortRef.apply(undefined, [reason], { arguments: { copy: true } });
    },
    dispose(): void {
      if (!isolate.isDisposed) isolate.dispose();
    },
  };
}

/** exec() and unwrap: the value, or a thrown Error carrying the guest's `{ name, message }`. */
export async function evaluate(guest: Guest, code: string): Promise<unknown> {
  const output = await guest.exec(code);
  if ('error' in output) throw Object.assign(new Error(`${output.error.name}: ${output.error.message}`), { guest: output.error });
  if (!('result' in output)) throw new Error('exec returned a tool result');
  return output.result;
}
