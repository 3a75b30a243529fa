import type { PermissionName } from './protocol.ts';

/** Who made a call, carried with every capability use so the audit trail can name it. */
export interface CallIdentity {
  readonly callId: string;
  readonly tool: string;
  readonly caller: string;
  readonly sessionId?: string | undefined;
}

/** One capability use or denial. */
export interface AuditRecord extends CallIdentity {
  readonly capability: PermissionName;
  /** The host:port, path or variable name the guest asked for, as it asked. */
  readonly target: string;
  readonly allowed: boolean;
  /** Why it was denied, when it was (e.g. "not granted", "private address 10.0.0.1"). */
  readonly reason?: string | undefined;
}

/** Declared here, implemented by the runtime (a log file, a table); the sandbox only writes to it. */
export interface AuditSink {
  record(entry: AuditRecord): void;
}
