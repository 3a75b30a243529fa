import { randomBytes } from 'node:crypto';
import { watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleToolModule } from '../../sandbox/bundler/tool-bundle.ts';
import type { Bundle } from '../../sandbox/bundler/tool-bundle.ts';
import { CallError } from '../../sandbox/errors.ts';
import type { Sandbox } from '../../sandbox/sandbox.ts';
import type { Logger } from '../observability/logger.ts';
import type { PermissionSet, ReloadReport, ToolLoadError, UserToolVersion, WriteToolReport } from '../tools/contract.ts';
import { kindOfPermissions } from './registry.ts';
import type { ToolRegistry } from './registry.ts';
import { TOOL_NAME, validateDeclarations } from './validate-declarations.ts';

export interface ToolLoaderDeps {
  registry: ToolRegistry;
  sandbox: Sandbox;
  toolsDir: string;
  /** Relative path entries in `permissions` resolve against the calls' working directory. */
  workspaceDir: string;
  log: Logger;
  /** Largest tool source accepted by writeTool, in bytes. @defaultValue 256 KiB */
  maxSourceBytes?: number;
}

/** A tool source that cannot be used: the message names file:line:column or the failing export. */
export class ToolSourceError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = new.target.name;
    this.problems = problems;
  }
}

const TOOL_FILE = /^[^._][^/]*\.(ts|js)$/;
const STAGING_PREFIX = '.staging-';
const WATCH_DEBOUNCE_MS = 15;

type Loaded = { ok: true; version: UserToolVersion; unchanged: boolean } | { ok: false; error: ToolLoadError };

/**
 * Loads user tools from the tools folder into the registry: bundles each file, reads its
 * declarations in the sandbox, validates them and swaps the new version in. A file that fails
 * keeps its last good version serving and gets its error recorded. Reloads run one at a time.
 */
export class ToolLoader {
  readonly #deps: ToolLoaderDeps;
  #queue: Promise<unknown> = Promise.resolve();
  #watcher: FSWatcher | undefined;
  #debounce: NodeJS.Timeout | undefined;

  constructor(deps: ToolLoaderDeps) {
    this.#deps = deps;
  }

  /** Rescans the folder: new and changed files load, deleted ones leave, unchanged bundles are skipped. */
  reload(): Promise<ReloadReport> {
    return this.#serialized(() => this.#reloadAll());
  }

  /**
   * write_tool: checks that the source compiles and exports the four definitions before anything
   * is written, then replaces tools/<name>.ts atomically and loads it.
   */
  writeTool(name: string, source: string): Promise<WriteToolReport> {
    return this.#serialized(async () => {
      if (!TOOL_NAME.test(name)) throw new ToolSourceError([`"${name}" is not a valid tool name: it must match ${TOOL_NAME.source}`]);
      if (this.#deps.registry.isBuiltin(name)) throw new ToolSourceError([`"${name}" is a built-in tool; choose another name`]);
      const limit = this.#deps.maxSourceBytes ?? 256 * 1024;
      if (Buffer.byteLength(source) > limit) throw new ToolSourceError([`the source is ${Buffer.byteLength(source)} bytes, over the limit of ${limit}`]);
      await mkdir(this.#deps.toolsDir, { recursive: true });
      const file = `${name}.ts`;
      const target = path.join(this.#deps.toolsDir, file);
      const staging = path.join(this.#deps.toolsDir, `${STAGING_PREFIX}${name}-${randomBytes(4).toString('hex')}.ts`);
      await writeFile(staging, source, { mode: 0o644 });
      try {
        const loaded = await this.#load(staging, file);
        if (!loaded.ok) throw new ToolSourceError(loaded.error.message.split('\n'));
        if (loaded.version.name !== name) throw new ToolSourceError([`export const name: the source declares "${loaded.version.name}", but it is being written as "${name}"`]);
        const owner = this.#deps.registry.lookup(name);
        if (owner?.source === 'user' && owner.version.file !== file) {
          throw new ToolSourceError([`the tool name "${name}" is already used by ${owner.version.file}`]);
        }
        const previous = this.#deps.registry.userToolOfFile(file);
        await rename(staging, target);
        this.#deps.registry.setUser(loaded.version);
        this.#deps.registry.clearError(file);
        return {
          name, file, created: previous === undefined,
          permissions: loaded.version.permissions,
          addedPermissions: permissionDifference(loaded.version.permissions, previous?.permissions ?? {}),
          removedPermissions: permissionDifference(previous?.permissions ?? {}, loaded.version.permissions),
        };
      } finally {
        await rm(staging, { force: true });
      }
    });
  }

  /** delete_tool: removes tools/<file of name> and the tool. Built-ins are refused by the registry. */
  deleteTool(name: string): Promise<boolean> {
    return this.#serialized(async () => {
      const entry = this.#deps.registry.lookup(name);
      if (entry === undefined) return false;
      if (entry.source === 'builtin') {
        this.#deps.registry.removeUser(name); // throws builtin_protected
        return false;
      }
      await rm(path.join(this.#deps.toolsDir, entry.version.file), { force: true });
      this.#deps.registry.removeUser(name);
      this.#deps.registry.clearError(entry.version.file);
      return true;
    });
  }

  /** Watches the folder; a change reloads (debounced) and logs the report. */
  watch(onReload?: (report: ReloadReport) => void): void {
    if (this.#watcher !== undefined) return;
    this.#watcher = watch(this.#deps.toolsDir, { recursive: true }, (_event, filename) => {
      if (filename !== null && path.basename(filename).startsWith(STAGING_PREFIX)) return;
      clearTimeout(this.#debounce);
      this.#debounce = setTimeout(() => {
        this.reload().then((report) => {
          if (report.added.length + report.updated.length + report.removed.length + report.errors.length > 0) {
            this.#deps.log.info({ reload: report }, 'tools reloaded');
          }
          onReload?.(report);
        }, (error: unknown) => { this.#deps.log.error({ err: error }, 'tool reload failed'); });
      }, WATCH_DEBOUNCE_MS);
    });
    this.#watcher.on('error', (error) => { this.#deps.log.error({ err: error }, 'tools folder watcher failed'); });
  }

  close(): void {
    clearTimeout(this.#debounce);
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  #serialized<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(run, run);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #reloadAll(): Promise<ReloadReport> {
    const started = performance.now();
    const { registry, toolsDir } = this.#deps;
    await mkdir(toolsDir, { recursive: true });
    const files = (await readdir(toolsDir, { withFileTypes: true }))
      .filter((entry) => entry.isFile() && TOOL_FILE.test(entry.name))
      .map((entry) => entry.name)
      .sort();
    const report = { added: [] as string[], updated: [] as string[], removed: [] as string[], unchanged: [] as string[], errors: [] as ToolLoadError[] };
    const seen = new Set<string>();
    for (const file of files) {
      const loaded = await this.#load(path.join(toolsDir, file), file);
      if (!loaded.ok) {
        registry.setError(loaded.error);
        report.errors.push(loaded.error);
        const current = registry.userToolOfFile(file);
        if (current !== undefined) seen.add(current.name); // the last good version keeps serving
        continue;
      }
      const { version } = loaded;
      seen.add(version.name);
      if (loaded.unchanged) {
        registry.clearError(file);
        report.unchanged.push(version.name);
        continue;
      }
      const previous = registry.userToolOfFile(file);
      try {
        if (previous !== undefined && previous.name !== version.name) registry.removeUser(previous.name);
        registry.setUser(version);
        registry.clearError(file);
        (previous === undefined ? report.added : report.updated).push(version.name);
      } catch (error) {
        const failure = { file, name: version.name, message: (error as Error).message };
        registry.setError(failure);
        report.errors.push(failure);
      }
    }
    for (const tool of registry.userTools()) {
      if (!seen.has(tool.name)) {
        registry.removeUser(tool.name);
        registry.clearError(tool.file);
        report.removed.push(tool.name);
      }
    }
    for (const error of registry.errors()) if (!files.includes(error.file)) registry.clearError(error.file);
    return { ...report, durationMs: performance.now() - started };
  }

  /** Bundles, describes and validates one file. `file` is the name it will have in the tools folder. */
  async #load(absolute: string, file: string): Promise<Loaded> {
    const { registry, sandbox, toolsDir } = this.#deps;
    let bundle: Bundle;
    try {
      bundle = await bundleToolModule(absolute, toolsDir);
    } catch (error) {
      const message = error instanceof CallError ? error.message : String(error);
      return { ok: false, error: { file, message: message.replaceAll(path.basename(absolute), file) } };
    }
    const current = registry.userToolOfFile(file);
    if (current !== undefined && current.bundle.hash === bundle.hash) return { ok: true, version: current, unchanged: true };
    const described = await sandbox.describe(bundle, { callId: `load:${file}`, tool: file, caller: 'loader' });
    if (!described.ok) return { ok: false, error: { file, message: `${file}: the module's top level failed: ${described.error.name}: ${described.error.message}` } };
    const checked = validateDeclarations(described.declarations, this.#deps.workspaceDir);
    if (!checked.ok) {
      const name = typeof described.declarations.name === 'string' ? described.declarations.name : undefined;
      return { ok: false, error: { file, name, message: checked.problems.map((problem) => `${file}: ${problem}`).join('\n') } };
    }
    const { declarations } = checked;
    if (registry.isBuiltin(declarations.name)) {
      return { ok: false, error: { file, name: declarations.name, message: `${file}: "${declarations.name}" is the name of a built-in tool; a user tool cannot shadow it` } };
    }
    const permissions = declarations.permissions as PermissionSet;
    const kind = kindOfPermissions(permissions);
    return {
      ok: true,
      unchanged: false,
      version: Object.freeze({
        name: declarations.name,
        description: declarations.description,
        parameters: declarations.parameters,
        permissions,
        kind,
        mode: kind === 'read' || kind === 'web' ? 'parallel' : 'sequential',
        file,
        bundle: { ...bundle, filename: file },
        loadedAt: new Date().toISOString(),
      }),
    };
  }
}

/** Entries in `a` not in `b`, per permission (true counts as everything). */
export function permissionDifference(a: PermissionSet, b: PermissionSet): PermissionSet {
  const difference: Record<string, true | string[]> = {};
  for (const key of ['net', 'read', 'write', 'env'] as const) {
    const left = a[key];
    const right = b[key];
    if (left === undefined || left === false) continue;
    if (right === true) continue;
    if (left === true) {
      difference[key] = true;
      continue;
    }
    const rightList = Array.isArray(right) ? right : [];
    const added = left.filter((entry) => !rightList.includes(entry));
    if (added.length > 0) difference[key] = added;
  }
  return difference;
}
