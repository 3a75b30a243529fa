/**
 * Shared set-up for the hostile suites: one real sandbox per test file (worker processes, the real
 * guest runtime, the real capabilities), calls with small limits, and the checks every case ends
 * with: the exact outcome, nothing of the host in it, and a next call on the same sandbox that
 * still works on pristine intrinsics with every worker it started with.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { AuditRecord } from '../../sandbox/audit.ts';
import { bundleToolModule } from '../../sandbox/bundler/tool-bundle.ts';
import { normalizeGrant } from '../../sandbox/grants/grant.ts';
import { DEFAULT_LIMITS } from '../../sandbox/limits.ts';
import type { CallLimits } from '../../sandbox/limits.ts';
import type { PoolEvent } from '../../sandbox/pool/worker-pool.ts';
import { startSandbox } from '../../sandbox/sandbox.ts';
import type { CallFailureInfo, ExecOutcome, Sandbox, ToolOutcome } from '../../sandbox/sandbox.ts';
import type { WireGrant } from '../../sandbox/worker/messages.ts';

/** The operator defaults of every hostile sandbox; cases lower them further. The heap matches the warm isolates. */
export const SUITE_LIMITS: Readonly<CallLimits> = Object.freeze({ ...DEFAULT_LIMITS, heapMiB: 32, wallTimeMs: 10_000, cpuTimeMs: 5_000 });

/** A CPU-bound case: the CPU limit must fire first even on a loaded machine, so the wall limit is far away. */
export const CPU_BOUND: Partial<CallLimits> = { cpuTimeMs: 300, wallTimeMs: 10_000 };
/** A case that waits without burning CPU: the wall limit must fire first. */
export const WALL_BOUND: Partial<CallLimits> = { cpuTimeMs: 5_000, wallTimeMs: 1_000 };

export const CPU_TIMEOUT = { kind: 'timeout', name: 'TimeoutError', message: 'The call exceeded its CPU-time limit of 300 ms.' } as const;
export const WALL_TIMEOUT = { kind: 'timeout', name: 'TimeoutError', message: 'The call exceeded its wall-time limit of 1000 ms.' } as const;
export const MEMORY_LIMIT = { kind: 'memory_limit', name: 'MemoryLimitError', message: 'The call exceeded its heap limit of 32 MiB.' } as const;

/** Configured secrets: only a granted name may ever come back. */
export const SECRETS: Readonly<Record<string, string>> = Object.freeze({ GRANTED_KEY: 'granted-value', HIDDEN_KEY: 'hidden-value-7f3a9c' });

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');

export interface CallOptions {
  grant?: Record<string, unknown>;
  limits?: Partial<CallLimits>;
  secrets?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
}

export interface ToolOptions extends CallOptions {
  params?: unknown;
  onUpdate?: (text: string) => void;
}

export interface Hostile {
  readonly sandbox: Sandbox;
  /** Real path of the file's scratch folder; calls run with `<root>/work` as their cwd. */
  readonly root: string;
  readonly work: string;
  readonly audit: AuditRecord[];
  readonly events: PoolEvent[];
  /** The worker pids the sandbox started with. */
  readonly initialPids: readonly number[];
  grant(input: Record<string, unknown>): WireGrant;
  /** Runs a code_exec snippet (JavaScript, the body of an async function). */
  exec(code: string, options?: CallOptions): Promise<ExecOutcome>;
  /** Bundles `source` as a tool module and runs it. */
  tool(source: string, options?: ToolOptions): Promise<ToolOutcome>;
  close(): Promise<void>;
}

let callCounter = 0;

export async function startHostile(options: { workers?: number; rssLimitMiB?: number } = {}): Promise<Hostile> {
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'paddock-hostile-')));
  const tools = path.join(root, 'tools');
  const work = path.join(root, 'work');
  await mkdir(tools);
  await mkdir(work);
  const audit: AuditRecord[] = [];
  const events: PoolEvent[] = [];
  const sandbox = await startSandbox({
    limits: SUITE_LIMITS,
    audit: { record: (record) => { audit.push(record); } },
    workers: options.workers ?? 1,
    warmIsolates: 2,
    ...(options.rssLimitMiB === undefined ? {} : { rssLimitMiB: options.rssLimitMiB }),
    onEvent: (event) => { events.push(event); },
  });
  const grant = (input: Record<string, unknown>): WireGrant => normalizeGrant(input, { cwd: work }) as unknown as WireGrant;
  const common = (call: CallOptions) => ({
    identity: { callId: `hostile-${++callCounter}`, tool: 'hostile', caller: 'hostile-suite' },
    grant: grant(call.grant ?? {}),
    limits: call.limits ?? {},
    cwd: work,
    secrets: call.secrets ?? SECRETS,
    signal: call.signal,
  });
  let toolCounter = 0;
  return {
    sandbox, root, work, audit, events,
    initialPids: sandbox.pool.pids(),
    grant,
    exec: (code, call = {}) => sandbox.exec({ ...common(call), code, language: 'js' }),
    async tool(source, call = {}) {
      const file = path.join(tools, `t${++toolCounter}.ts`);
      await writeFile(file, source);
      const bundle = await bundleToolModule(file, tools);
      return sandbox.runTool({ ...common(call), bundle, params: call.params ?? {}, onUpdate: call.onUpdate });
    },
    async close() {
      await sandbox.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

type Outcome = ExecOutcome | ToolOutcome;

export interface ExpectedFailure {
  kind: CallFailureInfo['kind'];
  name: string;
  message: string | RegExp;
}

/** The call failed exactly so, and its outcome carries nothing of the host. */
export function expectFailure(outcome: Outcome, expected: ExpectedFailure): void {
  const seen = outcome.ok ? { ok: true, value: 'result' in outcome ? outcome.result : outcome.content } : { ok: false, error: outcome.error };
  expect(seen).toEqual({
    ok: false,
    error: { kind: expected.kind, name: expected.name, message: typeof expected.message === 'string' ? expected.message : expect.stringMatching(expected.message) },
  });
  expectNothingLeaked(outcome);
}

/** A code_exec snippet succeeded with exactly `result`, and nothing of the host is in it. */
export function expectResult(outcome: ExecOutcome, result: unknown): void {
  expect(outcome.ok ? { ok: true, result: outcome.result } : { ok: false, error: outcome.error }).toEqual({ ok: true, result });
  expectNothingLeaked(outcome);
}

/** A tool call succeeded with exactly this normalized result. */
export function expectToolResult(outcome: ToolOutcome, result: { content: string; isError?: boolean; metadata?: unknown; terminate?: boolean }): void {
  const seen = outcome.ok
    ? { ok: true, content: outcome.content, isError: outcome.isError, metadata: outcome.metadata, terminate: outcome.terminate }
    : { ok: false, error: outcome.error };
  expect(seen).toEqual({ ok: true, isError: false, metadata: null, terminate: false, ...result });
  expectNothingLeaked(outcome);
}

const LEAK_PATTERNS: readonly RegExp[] = [
  /isolated-vm|isolated_vm|<isolated-vm>/i,
  /node:internal|node:[a-z_]+:\d+|\bnode_modules\b/,
  /file:\/\//,
  /\/root\b|\/home\//,
  /ExternalCopy|\bivm\b|derefInto|applySync/,
  /sandbox\/(host|worker|pool|capabilities|grants)\//,
];

/**
 * Nothing of the host in any string of the outcome: no repository or home path, no Node or
 * isolated-vm internals, no stack frame from anything but the guest runtime and the user's code,
 * and no configured secret the call was not granted.
 */
export function expectNothingLeaked(outcome: unknown, allowed: readonly string[] = []): void {
  let text = JSON.stringify(outcome);
  for (const fragment of allowed) text = text.split(fragment).join('<allowed>');
  expect(text).not.toContain(REPO_ROOT);
  expect(text).not.toContain(homedir());
  expect(text).not.toContain(SECRETS['HIDDEN_KEY']);
  for (const pattern of LEAK_PATTERNS) expect(text).not.toMatch(pattern);
  // Every stack frame names the guest runtime or the user's own file.
  for (const match of text.matchAll(/\bat [^\n\\]*?\(([^)\\]+)\)/g)) {
    expect(match[1]).toMatch(/^(paddock:runtime|snippet\.js|t\d+\.ts|<anonymous>|eval at [^,]+, <anonymous>)(:\d+:\d+)?$/);
  }
}

/**
 * The next call on the same sandbox works, in a fresh isolate: its intrinsics are pristine (no
 * pollution or global carried over), no host object is in sight, the bridge still answers with
 * Deno's denial, and no worker died unless the case expected it.
 */
export async function expectNextCallWorks(h: Hostile, options: { workerExits?: number } = {}): Promise<void> {
  const outcome = await h.exec(`
    const natives = [Array.prototype.push, Array.prototype[Symbol.iterator], Promise.prototype.then, JSON.stringify, JSON.parse,
      Map.prototype.get, Function.prototype.call, Object.prototype.toString, Object.defineProperty, String.prototype.replace];
    let denial = 'allowed';
    try { Deno.env.get('HIDDEN_KEY'); } catch (error) { denial = error.name + ': ' + error.message; }
    return {
      answer: 6 * 7,
      host: [typeof process, typeof require, typeof Buffer, typeof global, typeof WebAssembly],
      leftovers: [typeof globalThis.leftover, Object.getOwnPropertyNames(Object.prototype).length, 'then' in Object.prototype,
        typeof Error.prepareStackTrace, Error.stackTraceLimit],
      nativeIntrinsics: natives.every((fn) => /\\{ \\[native code\\] \\}$/.test(Function.prototype.toString.call(fn))),
      denial,
      timer: await new Promise((resolve) => setTimeout(() => resolve('fired'), 1)),
    };`);
  expectResult(outcome, {
    answer: 42,
    host: ['undefined', 'undefined', 'undefined', 'undefined', 'undefined'],
    leftovers: ['undefined', 12, false, 'undefined', 10],
    nativeIntrinsics: true,
    denial: 'NotCapable: Requires env access to "HIDDEN_KEY", run again with the --allow-env flag',
    timer: 'fired',
  });
  expect(h.events.filter((event) => event.type === 'worker-exited')).toHaveLength(options.workerExits ?? 0);
  if ((options.workerExits ?? 0) === 0) expect(h.sandbox.pool.pids()).toEqual(h.initialPids);
}

/** Audit records of denials for one capability, as `target: reason`. */
export function denials(h: Hostile, capability: AuditRecord['capability']): string[] {
  return h.audit.filter((record) => record.capability === capability && !record.allowed).map((record) => `${record.target}: ${record.reason ?? ''}`);
}
