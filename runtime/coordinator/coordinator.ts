import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { InvalidGrantError, resolveGrant } from '../../sandbox/grants/index.ts';
import type { PermissionSet } from '../../sandbox/grants/index.ts';
import type { CallLimits } from '../../sandbox/limits.ts';
import type { Sandbox } from '../../sandbox/sandbox.ts';
import type { WireGrant } from '../../sandbox/worker/messages.ts';
import type { Caller } from '../auth/keys.ts';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../observability/logger.ts';
import type { BuiltinTool, ExecResult, InvokeResult, JsonSchema, ToolHost, ToolResult, UserToolVersion } from '../tools/contract.ts';
import type { ToolRegistry } from '../registry/registry.ts';
import { ConcurrencyLimiter } from './limiter.ts';

export class ToolNotFoundError extends Error {
  readonly toolName: string;

  constructor(toolName: string, available: readonly string[]) {
    super(`There is no tool named "${toolName}". Available tools: ${available.join(', ') || '(none)'}.`);
    this.name = new.target.name;
    this.toolName = toolName;
  }
}

export interface ParamViolation {
  pointer: string;
  message: string;
}

export class InvalidParamsError extends Error {
  readonly violations: readonly ParamViolation[];

  constructor(tool: string, violations: readonly ParamViolation[]) {
    super(`Invalid parameters for "${tool}": ${violations.map((violation) => `${violation.pointer || '/'} ${violation.message}`).join('; ')}`);
    this.name = new.target.name;
    this.violations = violations;
  }
}

/** The request's `grants` is malformed (it can only narrow; a malformed one is refused, not ignored). */
export class InvalidGrantsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export interface CoordinatorDeps {
  registry: ToolRegistry;
  sandbox: Sandbox;
  config: Config;
  /** Resolved secret values (config "secrets"); only granted names ever reach a worker. */
  secrets: Readonly<Record<string, string>>;
  log: Logger;
  /** Upward functions lent to built-ins (reload, write, manuals ...), bound per call. */
  makeHost?: (caller: Caller, sessionId: string | null) => ToolHost;
  /** `outcome` is 'ok' or the error kind. */
  onCallEnd?: (tool: string, outcome: string, durationMs: number) => void;
}

export interface InvokeOptions {
  caller: Caller;
  params: unknown;
  /** Optional narrowing from the request (Deno-flag shape); it can only narrow. */
  grants?: unknown;
  sessionId?: string | null | undefined;
  signal?: AbortSignal | undefined;
  onUpdate?: ((text: string) => void) | undefined;
  callId?: string | undefined;
  /**
   * Set for calls a built-in makes through its ToolHost (test_tool, code_exec) while it holds a
   * slot: they run in the parent's slot, or N such built-ins at the limit would wait on each other forever.
   */
  nested?: boolean | undefined;
}

export interface ExecOptions {
  caller: Caller;
  code: string;
  language: 'ts' | 'js';
  grants?: unknown;
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** See InvokeOptions.nested. */
  nested?: boolean | undefined;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });

/**
 * The one choke point for tool calls: HTTP, MCP, the agent loop and the CLI all come through
 * here, so validation, grant intersection, concurrency, limits and accounting cannot differ
 * between entry points.
 */
export class Coordinator {
  readonly #deps: CoordinatorDeps;
  readonly #limiter: ConcurrencyLimiter;
  readonly #validators = new WeakMap<JsonSchema, ValidateFunction>();

  constructor(deps: CoordinatorDeps) {
    this.#deps = deps;
    this.#limiter = new ConcurrencyLimiter(deps.config.sandbox.maxConcurrentCalls, deps.config.sandbox.maxQueuedCalls);
  }

  get limiter(): ConcurrencyLimiter {
    return this.#limiter;
  }

  /**
   * Looks the tool up and validates the params (throwing ToolNotFoundError / InvalidParamsError /
   * InvalidGrantsError / OverloadedError before anything runs), then runs it and returns the
   * outcome, failures included, as an InvokeResult.
   */
  async invoke(name: string, options: InvokeOptions): Promise<InvokeResult> {
    const entry = this.#deps.registry.lookup(name);
    if (entry === undefined) throw new ToolNotFoundError(name, this.#deps.registry.describeAll().map((tool) => tool.name));
    const parameters = entry.source === 'builtin' ? entry.tool.parameters : entry.version.parameters;
    this.#validate(name, parameters, options.params);
    const callId = options.callId ?? randomUUID();
    const grant = entry.source === 'user' ? this.#grantFor(entry.version.permissions, options.caller, options.grants) : undefined;

    const release = options.nested === true ? noop : await this.#limiter.acquire(options.signal);
    const started = performance.now();
    let result: InvokeResult;
    try {
      result = entry.source === 'builtin'
        ? await this.#runBuiltin(entry.tool, callId, options, started)
        : await this.#runUser(entry.version, callId, options, grant ?? emptyGrant(), started);
    } finally {
      release();
    }
    this.#deps.onCallEnd?.(name, result.ok ? 'ok' : result.error?.kind ?? 'tool_error', result.durationMs);
    return result;
  }

  /** code_exec: a fresh isolate, no grant unless the request asks and the caller's policy allows. */
  async exec(options: ExecOptions): Promise<ExecResult> {
    const grant = this.#grantFor(options.grants ?? {}, options.caller, undefined);
    const release = options.nested === true ? noop : await this.#limiter.acquire(options.signal);
    try {
      const outcome = await this.#deps.sandbox.exec({
        identity: { callId: randomUUID(), tool: 'code_exec', caller: options.caller.name },
        code: options.code, language: options.language, grant, cwd: this.#deps.config.workspaceDir, secrets: this.#deps.secrets,
        signal: options.signal, limits: options.timeoutMs === undefined ? {} : { wallTimeMs: options.timeoutMs },
      });
      // A nested exec is the code_exec built-in's own call, which invoke already reports.
      if (options.nested !== true) this.#deps.onCallEnd?.('code_exec', outcome.ok ? 'ok' : outcome.error.kind, outcome.durationMs);
      return outcome.ok
        ? { ok: true, result: outcome.result, logs: outcome.logs, durationMs: outcome.durationMs }
        : { ok: false, result: null, logs: outcome.logs, error: outcome.error, durationMs: outcome.durationMs };
    } finally {
      release();
    }
  }

  #validate(tool: string, schema: JsonSchema, params: unknown): void {
    let validate = this.#validators.get(schema);
    if (validate === undefined) {
      validate = ajv.compile(schema);
      this.#validators.set(schema, validate);
    }
    if (!validate(params)) throw new InvalidParamsError(tool, (validate.errors ?? []).map(describeViolation));
  }

  #grantFor(declared: unknown, caller: Caller, narrowing: unknown): WireGrant {
    const policy = this.#deps.config.policies[caller.policy] ?? {};
    try {
      // normalizeGrant (inside) validates the shapes: the declaration and the request are untrusted input.
      const narrowed = narrowing === undefined || narrowing === null ? undefined : narrowing as PermissionSet;
      return resolveGrant(declared as PermissionSet, policy, narrowed, { cwd: this.#deps.config.workspaceDir }) as unknown as WireGrant;
    } catch (error) {
      if (error instanceof InvalidGrantError) throw new InvalidGrantsError(`Invalid grants: ${error.message}`);
      throw error;
    }
  }

  async #runUser(version: UserToolVersion, callId: string, options: InvokeOptions, grant: WireGrant, started: number): Promise<InvokeResult> {
    const limits: Partial<CallLimits> = {};
    const outcome = await this.#deps.sandbox.runTool({
      identity: { callId, tool: version.name, caller: options.caller.name, sessionId: options.sessionId ?? undefined },
      bundle: version.bundle, params: options.params, grant, limits,
      cwd: this.#deps.config.workspaceDir, secrets: this.#deps.secrets,
      signal: options.signal, onUpdate: options.onUpdate,
    });
    const durationMs = Math.round(performance.now() - started);
    if (!outcome.ok) {
      const kind = outcome.error.kind === 'compile_error' ? 'tool_error' : outcome.error.kind;
      return { callId, tool: version.name, ok: false, content: '', error: { kind, message: outcome.error.message, name: outcome.error.name }, metadata: null, terminate: false, durationMs };
    }
    return {
      callId, tool: version.name, ok: !outcome.isError, content: outcome.content,
      ...(outcome.isError ? { error: { kind: 'tool_error' as const, message: outcome.content } } : {}),
      metadata: outcome.metadata, terminate: outcome.terminate, durationMs,
    };
  }

  async #runBuiltin(tool: BuiltinTool, callId: string, options: InvokeOptions, started: number): Promise<InvokeResult> {
    const sessionId = options.sessionId ?? null;
    const signal = options.signal ?? new AbortController().signal;
    const host = this.#deps.makeHost?.(options.caller, sessionId) ?? missingHost;
    try {
      signal.throwIfAborted();
      const raw = await tool.execute(options.params, { callId, sessionId, caller: options.caller, signal, update: (text) => options.onUpdate?.(text), host });
      const result: ToolResult = typeof raw === 'string' ? { content: raw, isError: false, metadata: null, terminate: false } : raw;
      const durationMs = Math.round(performance.now() - started);
      return {
        callId, tool: tool.name, ok: !result.isError, content: result.content,
        ...(result.isError ? { error: { kind: 'tool_error' as const, message: result.content } } : {}),
        metadata: result.metadata, terminate: result.terminate, durationMs,
      };
    } catch (error) {
      const aborted = signal.aborted;
      if (!aborted) this.#deps.log.warn({ err: error, tool: tool.name, callId }, 'built-in tool failed');
      return {
        callId, tool: tool.name, ok: false, content: '',
        error: { kind: aborted ? 'aborted' : 'tool_error', message: aborted ? 'The call was aborted.' : error instanceof Error ? error.message : String(error) },
        metadata: null, terminate: false, durationMs: Math.round(performance.now() - started),
      };
    }
  }
}

const noop = (): void => undefined;

function emptyGrant(): WireGrant {
  return { net: [], read: [], write: [], env: [] };
}

/** An ajv error in words an LLM can act on, with the JSON pointer of the offending value. */
function describeViolation(error: ErrorObject): ParamViolation {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { pointer: `${error.instancePath}/${String(params['missingProperty'])}`, message: 'is required but missing' };
    case 'additionalProperties':
      return { pointer: `${error.instancePath}/${String(params['additionalProperty'])}`, message: 'is not an allowed property' };
    case 'type':
      return { pointer: error.instancePath, message: `must be ${String(params['type'])}` };
    case 'enum':
      return { pointer: error.instancePath, message: `must be one of ${JSON.stringify(params['allowedValues'])}` };
    default:
      return { pointer: error.instancePath, message: error.message ?? 'is invalid' };
  }
}

const missingHost: ToolHost = {
  reloadTools: () => Promise.reject(new Error('not available here')),
  writeTool: () => Promise.reject(new Error('not available here')),
  deleteTool: () => Promise.reject(new Error('not available here')),
  listTools: () => [],
  loadErrors: () => [],
  invoke: () => Promise.reject(new Error('not available here')),
  exec: () => Promise.reject(new Error('not available here')),
  manual: () => Promise.resolve(undefined),
};
