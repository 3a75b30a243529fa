/**
 * The only holder of the host doors. Boot hands them over once; afterwards they live in this
 * module's closure, reachable by no property of any object the guest can see.
 */
import type { AsyncOp, AsyncOps, BridgeError, BridgeOutcome, SyncOp, SyncOps } from '../protocol.ts';
import { abortError, rebuildError } from './errors.ts';
import {
  ErrorCtor, MapPrototypeDelete, MapPrototypeForEach, MapPrototypeGet, MapPrototypeSet, ObjectHasOwn, SafeMap,
  TypeErrorCtor, withResolvers,
} from './primordials.ts';

export interface Doors {
  request: (op: string, args: unknown) => unknown;
  call: (op: string, args: unknown) => unknown;
  cancel: (id: number) => unknown;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

let doors: Doors | null = null;
const pending = new SafeMap<number, Pending>();

export function installDoors(given: Doors): void {
  if (doors !== null) throw new TypeErrorCtor('The bridge is already installed.');
  doors = given;
}

function requireDoors(): Doors {
  if (doors === null) throw new TypeErrorCtor('The Paddock runtime has not been booted.');
  return doors;
}

/**
 * A door that throws (the host refused the crossing, e.g. a byte cap) hands us an error object
 * copied from the host; keep only its message so no host stack or path reaches the tool.
 */
function sanitizeThrown(error: unknown): Error {
  const message = typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string'
    ? (error as { message: string }).message
    : 'The host refused the operation.';
  return new ErrorCtor(message);
}

function readOutcome(outcome: unknown): BridgeOutcome {
  if (typeof outcome !== 'object' || outcome === null || !ObjectHasOwn(outcome, 'ok')) {
    return { ok: false, error: { name: 'Error', message: 'The host returned a malformed outcome.' } };
  }
  const record = outcome as { ok: unknown; value?: unknown; error?: unknown };
  if (record.ok === true) return { ok: true, value: ObjectHasOwn(record, 'value') ? record.value : undefined };
  const error = ObjectHasOwn(record, 'error') ? record.error : undefined;
  if (typeof error === 'object' && error !== null) {
    const { name, message } = error as Partial<BridgeError>;
    return { ok: false, error: { name: typeof name === 'string' ? name : 'Error', message: typeof message === 'string' ? message : '' } };
  }
  return { ok: false, error: { name: 'Error', message: 'The host operation failed.' } };
}

/** A synchronous host operation; a host error is thrown as its rebuilt guest error. */
export function hostCall<Op extends SyncOp>(op: Op, args: SyncOps[Op]['args']): SyncOps[Op]['result'] {
  const call = requireDoors().call;
  let raw: unknown;
  try {
    raw = call(op, args);
  } catch (error) {
    throw sanitizeThrown(error);
  }
  const outcome = readOutcome(raw);
  if (!outcome.ok) throw rebuildError(outcome.error);
  return outcome.value as SyncOps[Op]['result'];
}

export interface HostRequest<T> {
  readonly id: number;
  readonly promise: Promise<T>;
}

/** Starts an asynchronous host operation; the host settles it through `settle` exactly once. */
export function hostRequest<Op extends AsyncOp>(op: Op, args: AsyncOps[Op]['args']): HostRequest<AsyncOps[Op]['result']> {
  const request = requireDoors().request;
  let id: unknown;
  try {
    id = request(op, args);
  } catch (error) {
    throw sanitizeThrown(error);
  }
  if (typeof id !== 'number') throw new TypeErrorCtor('The host returned a malformed request id.');
  const { promise, resolve, reject } = withResolvers<AsyncOps[Op]['result']>();
  MapPrototypeSet(pending, id, { resolve: resolve as (value: unknown) => void, reject });
  return { id, promise };
}

/**
 * Asks the host to abandon a request. The request is rejected here at once with an AbortError and
 * forgotten, so the host's later settle is ignored and a second cancel of the same id is a no-op.
 */
export function hostCancel(id: number): void {
  const entry = MapPrototypeGet(pending, id);
  if (entry === undefined) return;
  MapPrototypeDelete(pending, id);
  entry.reject(abortError());
  try {
    requireDoors().cancel(id);
  } catch {
    // Cancelling is best effort by contract: the host may have finished the operation already.
  }
}

/** Called by the host (through a Reference) with each request's outcome. Unknown ids are ignored. */
export function settle(id: unknown, outcome: unknown): void {
  if (typeof id !== 'number') return;
  const entry = MapPrototypeGet(pending, id);
  if (entry === undefined) return;
  MapPrototypeDelete(pending, id);
  const read = readOutcome(outcome);
  if (read.ok) entry.resolve(read.value);
  else entry.reject(rebuildError(read.error));
}

/** Asks the host to abandon every request still in flight (the call is being aborted). */
export function cancelAllRequests(): void {
  const ids: number[] = [];
  let count = 0;
  MapPrototypeForEach(pending, (_entry, id) => { ids[count++] = id; });
  for (let i = 0; i < count; i++) hostCancel(ids[i] as number);
}
