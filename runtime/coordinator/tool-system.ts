import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { resolveLimits, DEFAULT_LIMITS } from '../../sandbox/limits.ts';
import { startSandbox } from '../../sandbox/sandbox.ts';
import type { Sandbox } from '../../sandbox/sandbox.ts';
import type { Caller } from '../auth/keys.ts';
import type { Config } from '../config/schema.ts';
import { AuditLog } from '../observability/audit-log.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { ToolLoader } from '../registry/loader.ts';
import { ToolRegistry } from '../registry/registry.ts';
import type { RegistryChange } from '../registry/registry.ts';
import type { BuiltinTool, ToolHost } from '../tools/contract.ts';
import { generatedManual } from '../tools/manual.ts';
import { Coordinator } from './coordinator.ts';

/** Everything behind the tool API: the sandbox, the registry and its loader, and the choke point. */
export interface ToolSystem {
  readonly sandbox: Sandbox;
  readonly registry: ToolRegistry;
  readonly loader: ToolLoader;
  readonly coordinator: Coordinator;
  readonly audit: AuditLog;
  /** The manual of a tool: manuals/<name>.md, else one generated from its schema. */
  manual(name: string): Promise<string | undefined>;
  /** Registry changes (for MCP's list_changed); returns an unsubscribe function. */
  subscribe(listener: (change: RegistryChange) => void): () => void;
  close(): Promise<void>;
}

export interface ToolSystemOptions {
  config: Config;
  log: Logger;
  /** The service's environment, only for `{ "env": NAME }` secret references. */
  env: Readonly<Record<string, string | undefined>>;
  builtins?: readonly BuiltinTool[];
  /** Watch the tools folder and hot-reload. @defaultValue true */
  watch?: boolean;
  /** The service's metrics: tool calls by outcome, denials, worker exits, calls in flight. */
  metrics?: Metrics;
}

export async function startToolSystem(options: ToolSystemOptions): Promise<ToolSystem> {
  const { config, log } = options;
  const audit = await AuditLog.open(config.dataDir, log.child({ component: 'audit' }), {
    maxFileBytes: config.log.auditMaxFileMiB * 1024 * 1024, keepFiles: config.log.auditKeepFiles, deniedWarningsPerMinute: config.log.deniedWarningsPerMinute,
  });
  const limits = resolveLimits(DEFAULT_LIMITS, config.sandbox.limits);
  const { metrics } = options;
  const killed = new Set<number>();
  const sandbox = await startSandbox({
    limits,
    audit: {
      record: (record) => {
        if (!record.allowed) metrics?.capabilityDenials.inc({ capability: record.capability });
        audit.record(record);
      },
    },
    workers: config.sandbox.workers === 0 ? Math.max(1, availableParallelism()) : config.sandbox.workers,
    callsPerWorker: config.sandbox.callsPerWorker,
    maxCallsPerWorker: config.sandbox.maxCallsPerWorker,
    warmIsolates: config.sandbox.warmIsolates,
    rssLimitMiB: config.sandbox.rssLimitMiB,
    memoryCgroup: config.sandbox.memoryCgroup,
    workerNiceSteps: config.sandbox.workerNiceSteps,
    onEvent: (event) => {
      const level = event.type === 'worker-started' ? log.debug : event.type === 'memory-ceiling' ? log.info : log.warn;
      level.call(log, { sandbox: event }, `sandbox ${event.type}`);
      if (event.type === 'worker-killed') killed.add(event.pid);
      if (event.type === 'worker-exited') {
        const killedBySupervisor = killed.delete(event.pid);
        metrics?.workerExits.inc({ reason: event.overMemoryCeiling ? 'memory' : killedBySupervisor ? 'killed' : 'crashed' });
      }
    },
  });
  metrics?.observeSandbox(() => ({ inFlight: sandbox.pool.inFlight, workers: sandbox.pool.pids().length }));
  const listeners = new Set<(change: RegistryChange) => void>();
  const registry = new ToolRegistry({ onChange: (change) => { for (const listener of listeners) listener(change); } });
  for (const tool of options.builtins ?? []) {
    if (tool.isAvailable === undefined || await tool.isAvailable()) registry.registerBuiltin(tool);
  }
  const loader = new ToolLoader({ registry, sandbox, toolsDir: config.toolsDir, workspaceDir: config.workspaceDir, log });
  const manual = async (name: string): Promise<string | undefined> => {
    const entry = registry.lookup(name);
    if (entry === undefined) return undefined;
    try {
      return await readFile(path.join(config.manualsDir, `${name}.md`), 'utf8');
    } catch {
      return generatedManual(entry);
    }
  };
  // makeHost's functions run only during calls, after `coordinator` below exists.
  const makeHost = (caller: Caller, sessionId: string | null): ToolHost => ({
    reloadTools: () => loader.reload(),
    writeTool: (name, source) => loader.writeTool(name, source),
    deleteTool: async (name) => { await loader.deleteTool(name); },
    listTools: () => registry.describeAll(),
    loadErrors: () => registry.errors(),
    invoke: (name, params, signal) => coordinator.invoke(name, { caller, params, sessionId, signal, nested: true }),
    exec: (code, language, signal) => coordinator.exec({ caller, code, language, signal, nested: true }),
    manual,
  });
  const coordinator: Coordinator = new Coordinator({
    registry, sandbox, config, secrets: resolveSecrets(config.secrets, options.env, log), log, makeHost,
    onCallEnd: (_tool, outcome, durationMs) => {
      metrics?.toolCalls.inc({ outcome });
      metrics?.toolDuration.observe({ outcome }, durationMs / 1000);
    },
  });

  const report = await loader.reload();
  log.info({ tools: registry.describeAll().length, user: report.added, errors: report.errors }, 'tools loaded');
  for (const error of report.errors) log.warn({ file: error.file, error: error.message }, 'tool failed to load');
  if (options.watch !== false) loader.watch();

  return {
    sandbox, registry, loader, coordinator, audit, manual,
    subscribe(listener) {
      listeners.add(listener);
      return () => { listeners.delete(listener); };
    },
    async close() {
      loader.close();
      await sandbox.close();
      await audit.close();
    },
  };
}

/** Literal values, or `{ "env": NAME }` taken from the service environment (missing ones are reported). */
function resolveSecrets(secrets: Config['secrets'], env: ToolSystemOptions['env'], log: Logger): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [name, value] of Object.entries(secrets)) {
    if (typeof value === 'string') resolved[name] = value;
    else {
      const fromEnv = env[value.env];
      if (fromEnv === undefined) log.warn({ secret: name, variable: value.env }, 'secret refers to an unset environment variable; it reads as unset');
      else resolved[name] = fromEnv;
    }
  }
  return resolved;
}
