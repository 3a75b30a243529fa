import { createHash } from 'node:crypto';
import type { AuditSink, CallIdentity } from './audit.ts';
import { buildGuestRuntime } from './bundler/guest-runtime.ts';
import type { Bundle } from './bundler/tool-bundle.ts';
import { bundleSnippet } from './bundler/tool-bundle.ts';
import { CallError } from './errors.ts';
import type { CallErrorKind } from './errors.ts';
import { narrowLimits } from './limits.ts';
import type { CallLimits } from './limits.ts';
import { WorkerPool } from './pool/worker-pool.ts';
import type { PoolEvent } from './pool/worker-pool.ts';
import type { GuestToolResult } from './protocol.ts';
import type { CallReply, CallRequest, CallTimings, WireGrant } from './worker/messages.ts';

export interface SandboxOptions {
  /** The guest runtime script (sandbox/bundler/guest-runtime.ts). */
  runtime: { code: string; hash: string };
  /** Operator defaults; a call may only lower them. */
  limits: Readonly<CallLimits>;
  audit: AuditSink;
  workers?: number | undefined;
  /** CPU-busy calls one worker runs at once; calls awaiting I/O do not count (sandbox/pool/worker-pool.ts). @defaultValue 4 */
  callsPerWorker?: number | undefined;
  /** Calls one worker holds at once, busy or idle: bounds its memory. @defaultValue 256 */
  maxCallsPerWorker?: number | undefined;
  rssLimitMiB?: number | undefined;
  /** Where workers' memory cgroups go (sandbox/pool/memory-cgroup.ts). @defaultValue 'auto' */
  memoryCgroup?: string | undefined;
  /** How many nice steps below the service workers run (sandbox/pool/worker-pool.ts). @defaultValue 10 */
  workerNiceSteps?: number | undefined;
  warmIsolates?: number | undefined;
  /** Prepare isolates from a startup snapshot of the runtime (sandbox/pool/worker-pool.ts). @defaultValue true */
  snapshot?: boolean | undefined;
  onEvent?: ((event: PoolEvent) => void) | undefined;
}

export interface LogLine {
  level: string;
  text: string;
}

interface CallCommon {
  identity: CallIdentity;
  /** The effective grant, already resolved (declared ∩ policy ∩ request). */
  grant: WireGrant;
  limits?: Partial<CallLimits> | undefined;
  cwd: string;
  /** The operator's configured secrets; only the names the grant allows reach the worker. */
  secrets: Readonly<Record<string, string>>;
  signal?: AbortSignal | undefined;
  /** Each console line as the guest writes it (the outcome's `logs` hold them all as well). */
  onLog?: ((line: LogLine) => void) | undefined;
}

export interface ToolCall extends CallCommon {
  bundle: Pick<Bundle, 'code' | 'hash' | 'filename'>;
  params: unknown;
  onUpdate?: ((text: string) => void) | undefined;
}

export interface ExecCall extends CallCommon {
  code: string;
  language: 'ts' | 'js';
}

export interface CallFailureInfo {
  kind: CallErrorKind;
  message: string;
  /** The guest error's class name (`NotCapable`, `TypeError`, ...) when the guest threw. */
  name: string;
}

/** Where a call's time went (ms), when it reached a worker: for benchmarks and slow-call diagnosis. */
export type { CallTimings };

export type ToolOutcome =
  | ({ ok: true } & GuestToolResult & { logs: LogLine[]; cpuMs: number; durationMs: number; timings?: CallTimings | undefined })
  | { ok: false; error: CallFailureInfo; logs: LogLine[]; cpuMs: number; durationMs: number; timings?: CallTimings | undefined };

export type ExecOutcome =
  | { ok: true; result: unknown; logs: LogLine[]; cpuMs: number; durationMs: number; timings?: CallTimings | undefined }
  | { ok: false; error: CallFailureInfo; logs: LogLine[]; cpuMs: number; durationMs: number; timings?: CallTimings | undefined };

/** What a tool module exports besides execute, as JSON copies (null where absent or not JSON). */
export interface ModuleDeclarations {
  name: unknown;
  description: unknown;
  parameters: unknown;
  permissions: unknown;
  hasExecute: boolean;
}

const NO_WIRE_GRANT: WireGrant = { net: [], read: [], write: [], env: [] };

/** Starts a sandbox with the guest runtime built from sandbox/guest (once per process). */
export async function startSandbox(options: Omit<SandboxOptions, 'runtime'>): Promise<Sandbox> {
  const code = await buildGuestRuntime();
  const sandbox = new Sandbox({ ...options, runtime: { code, hash: createHash('sha256').update(code).digest('hex') } });
  await sandbox.ready();
  return sandbox;
}

/** Names the guest sees for host-side failures that have no guest error class. */
const NAME_BY_KIND: Readonly<Record<CallErrorKind, string>> = {
  tool_error: 'Error',
  not_capable: 'NotCapable',
  timeout: 'TimeoutError',
  memory_limit: 'MemoryLimitError',
  output_limit: 'OutputLimitError',
  aborted: 'AbortError',
  crashed: 'SandboxCrashed',
  compile_error: 'SyntaxError',
};

/**
 * What the coordinator sees of the sandbox: run a bundled tool or a snippet with a resolved grant
 * and get an outcome back. Where and how it runs (worker processes, isolates) stays in here.
 */
export class Sandbox {
  readonly #options: SandboxOptions;
  readonly #pool: WorkerPool;

  constructor(options: SandboxOptions) {
    this.#options = options;
    this.#pool = new WorkerPool({
      runtime: options.runtime,
      audit: options.audit,
      warm: { heapMiB: options.limits.heapMiB, count: options.warmIsolates ?? 2 },
      ...(options.workers === undefined ? {} : { size: options.workers }),
      ...(options.callsPerWorker === undefined ? {} : { callsPerWorker: options.callsPerWorker }),
      ...(options.maxCallsPerWorker === undefined ? {} : { maxCallsPerWorker: options.maxCallsPerWorker }),
      ...(options.rssLimitMiB === undefined ? {} : { rssLimitMiB: options.rssLimitMiB }),
      ...(options.memoryCgroup === undefined ? {} : { memoryCgroup: options.memoryCgroup }),
      ...(options.workerNiceSteps === undefined ? {} : { niceSteps: options.workerNiceSteps }),
      ...(options.snapshot === undefined ? {} : { snapshot: options.snapshot }),
      ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    });
  }

  ready(): Promise<void> {
    return this.#pool.ready();
  }

  get pool(): WorkerPool {
    return this.#pool;
  }

  async runTool(call: ToolCall): Promise<ToolOutcome> {
    const started = performance.now();
    const logs: LogLine[] = [];
    const reply = await this.#pool.run({
      request: this.#request(call, call.bundle, { kind: 'tool', params: call.params, callId: call.identity.callId, sessionId: call.identity.sessionId ?? null }),
      signal: call.signal,
      onUpdate: call.onUpdate,
      onLog: (level, text) => { logs.push({ level, text }); call.onLog?.({ level, text }); },
    });
    const durationMs = performance.now() - started;
    const { timings } = reply;
    if (!reply.ok) return { ok: false, error: failureInfo(reply), logs, cpuMs: reply.cpuMs, durationMs, timings };
    const value = reply.value as GuestToolResult;
    return { ok: true, content: value.content, isError: value.isError, metadata: value.metadata, terminate: value.terminate, logs, cpuMs: reply.cpuMs, durationMs, timings };
  }

  async exec(call: ExecCall): Promise<ExecOutcome> {
    const started = performance.now();
    let bundle: Bundle;
    try {
      bundle = await bundleSnippet(call.code, call.language);
    } catch (error) {
      const failure = error instanceof CallError ? error : new CallError('compile_error', String(error));
      return { ok: false, error: { kind: failure.kind, message: failure.message, name: 'SyntaxError' }, logs: [], cpuMs: 0, durationMs: performance.now() - started };
    }
    const logs: LogLine[] = [];
    const reply = await this.#pool.run({
      request: this.#request(call, bundle, { kind: 'exec' }),
      signal: call.signal,
      onLog: (level, text) => { logs.push({ level, text }); call.onLog?.({ level, text }); },
    });
    const durationMs = performance.now() - started;
    const { timings } = reply;
    if (!reply.ok) return { ok: false, error: failureInfo(reply), logs, cpuMs: reply.cpuMs, durationMs, timings };
    return { ok: true, result: (reply.value as { result: unknown }).result, logs, cpuMs: reply.cpuMs, durationMs, timings };
  }

  /**
   * Reads a module's declarations by evaluating it in a sandbox with no grant (its top level runs,
   * execute does not). The values are JSON copies; the registry validates them.
   */
  async describe(bundle: Bundle, identity: CallIdentity): Promise<{ ok: true; declarations: ModuleDeclarations } | { ok: false; error: CallFailureInfo }> {
    const reply = await this.#pool.run({
      request: this.#request({ identity, grant: NO_WIRE_GRANT, cwd: '/', secrets: {}, limits: { wallTimeMs: 5000, cpuTimeMs: 2000 } }, bundle, { kind: 'describe' }),
    });
    if (!reply.ok) return { ok: false, error: failureInfo(reply) };
    return { ok: true, declarations: (reply.value as { result: ModuleDeclarations }).result };
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  #request(call: CallCommon, bundle: Pick<Bundle, 'code' | 'hash' | 'filename'>, input: CallRequest['input']): CallRequest {
    return {
      identity: call.identity,
      bundle: { code: bundle.code, hash: bundle.hash, filename: bundle.filename },
      input,
      grant: call.grant,
      limits: narrowLimits(this.#options.limits, call.limits ?? {}),
      cwd: call.cwd,
      secrets: grantedSecrets(call.grant.env, call.secrets),
    };
  }
}

function failureInfo(reply: Extract<CallReply, { ok: false }>): CallFailureInfo {
  const guestName = reply.error.details['name'];
  return {
    kind: reply.error.kind,
    message: reply.error.message,
    name: typeof guestName === 'string' ? guestName : NAME_BY_KIND[reply.error.kind],
  };
}

/** Only the secrets the call may read travel to the worker (names, or `PREFIX_*` as Deno allows). */
export function grantedSecrets(envGrant: WireGrant['env'], secrets: Readonly<Record<string, string>>): Record<string, string> {
  const granted: Record<string, string> = {};
  for (const [name, value] of Object.entries(secrets)) {
    const allowed = envGrant === true || envGrant.some((entry) => (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : entry === name));
    if (allowed) granted[name] = value;
  }
  return granted;
}
