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

export type CallReply =
  | { ok: true; value: GuestToolResult | { result: unknown }; cpuMs: number }
  | { ok: false; error: CallFailure; cpuMs: number };

/** Coordinator -> worker. */
export type ToWorker =
  | { type: 'init'; runtime: { code: string; hash: string }; warm: { heapMiB: number; count: number } }
  | { type: 'call'; id: number; request: CallRequest }
  | { type: 'abort'; id: number };

/** Worker -> coordinator. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'update'; id: number; text: string }
  | { type: 'log'; id: number; level: string; text: string }
  | { type: 'audit'; record: AuditRecord }
  | { type: 'result'; id: number; reply: CallReply };
