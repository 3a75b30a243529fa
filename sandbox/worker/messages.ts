import type { AuditRecord, CallIdentity } from '../audit.ts';
import type { CallErrorKind } from '../errors.ts';
import type { CallLimits } from '../limits.ts';
import type { GuestToolResult } from '../protocol.ts';
import type { InvokeInput } from '../host/run-in-isolate.ts';

/** A grant as it travels to a worker: already resolved (intersected) and normalised by the coordinator side. */
export interface WireGrant {
  net: true | string[];
  read: true | string[];
  write: true | string[];
  env: true | string[];
}

export interface CallRequest {
  identity: CallIdentity;
  bundle: { code: string; hash: string; filename: string };
  input: InvokeInput;
  grant: WireGrant;
  limits: CallLimits;
  /** Working directory relative paths resolve against. */
  cwd: string;
  /** Only the secrets the grant lets this call read: nothing else reaches the worker. */
  secrets: Record<string, string>;
}

export interface CallFailure {
  kind: CallErrorKind;
  message: string;
  details: Record<string, unknown>;
}

/**
 * Where a call's time went inside its worker, in ms. `receivedAt` and `repliedAt` are on the
 * machine's monotonic clock (./clock.ts), which every process shares, so the supervisor can tell
 * the time spent in the IPC channel and waiting for the worker's event loop from the worker's own.
 */
export interface WorkerTimings {
  receivedAt: number;
  repliedAt: number;
  /** Capabilities bound to the call's grant. */
  bind: number;
  /** Getting an isolate: a prepared one from the warm pool, or one prepared inside the call (cold). */
  isolate: number;
  cold: boolean;
  /** The bundle compiled in the isolate (V8 code cache when the worker has seen it). */
  compile: number;
  /** The module's top level. */
  run: number;
  /** execute, until its result was copied out. */
  invoke: number;
  /** Result checks and output accounting. */
  finish: number;
  /** Everything else between receiving the call and sending its reply (clean-up before the reply). */
  rest: number;
}

/** WorkerTimings as the supervisor completes them: its queue and the two trips over IPC (ms). */
export interface CallTimings extends Omit<WorkerTimings, 'receivedAt' | 'repliedAt'> {
  /** Waiting in the supervisor for a worker with room (and for a new worker to start). */
  queued: number;
  /** From the supervisor's send until the worker's handler ran (serialization, pipe, the worker's event loop). */
  toWorker: number;
  /** From the worker's send until the supervisor's handler ran. */
  fromWorker: number;
}

export type CallReply =
  | { ok: true; value: GuestToolResult | { result: unknown }; cpuMs: number; timings?: CallTimings | undefined }
  | { ok: false; error: CallFailure; cpuMs: number; timings?: CallTimings | undefined };

/** What a worker sends back: the reply with its own timings (the supervisor turns them into CallTimings). */
export type WorkerReply =
  | { ok: true; value: GuestToolResult | { result: unknown }; cpuMs: number; timings?: WorkerTimings }
  | { ok: false; error: CallFailure; cpuMs: number; timings?: WorkerTimings };

/**
 * A call as it crosses to a worker: the bundle's code travels only when that worker does not hold it
 * yet (`keep`: hold it for later calls), and `forget` lists bundles it should drop. The supervisor
 * keeps the same bounded record per worker (sandbox/pool/bundle-cache.ts); both sides change it
 * only through these messages, which arrive in order.
 */
export interface WireCallRequest extends Omit<CallRequest, 'bundle'> {
  bundle: { hash: string; filename: string; code?: string; keep: boolean };
  forget?: string[];
}

/** Coordinator -> worker. */
export type ToWorker =
  /** `snapshot`: make a startup snapshot of the runtime once ready (off when one killed a worker). */
  | { type: 'init'; runtime: { code: string; hash: string }; warm: { heapMiB: number; count: number }; snapshot: boolean }
  | { type: 'call'; id: number; request: WireCallRequest }
  | { type: 'abort'; id: number };

/** Worker -> coordinator. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'update'; id: number; text: string }
  | { type: 'log'; id: number; level: string; text: string }
  | { type: 'audit'; record: AuditRecord }
  | { type: 'result'; id: number; reply: WorkerReply }
  /**
   * The call's guest turned idle (awaiting host operations or timers) or busy (computing) again; a
   * call starts busy and is told about nothing after its result. The supervisor counts only busy
   * calls against callsPerWorker (sandbox/pool/worker-pool.ts).
   */
  | { type: 'activity'; id: number; busy: boolean }
  /** The call named a bundle this worker does not hold (the records disagree): send it again with its code. */
  | { type: 'need-code'; id: number }
  /** Around making the runtime snapshot: a worker that dies while `creating` turns snapshots off for later workers. */
  | { type: 'snapshot'; state: 'creating' | 'ready' | 'failed'; message?: string };
