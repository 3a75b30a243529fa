import type { BuiltinTool, PermissionSet, ToolDescription, ToolLoadError, UserToolVersion } from '../tools/contract.ts';

export class RegistryError extends Error {
  readonly code: 'builtin_protected' | 'name_taken' | 'not_found';

  constructor(code: RegistryError['code'], message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

export type RegisteredTool = { readonly source: 'builtin'; readonly tool: BuiltinTool } | { readonly source: 'user'; readonly version: UserToolVersion };

export type RegistryChange =
  | { type: 'tool-added' | 'tool-replaced'; name: string; hash: string }
  | { type: 'tool-removed'; name: string };

/**
 * Every tool by name. Keys are untrusted names, so a Map (never a plain object). Built-ins are
 * registered at start and never replaced or removed; user versions are immutable and swapped in
 * whole, so a call that looked up a version finishes on it whatever happens next.
 */
export class ToolRegistry {
  readonly #tools = new Map<string, RegisteredTool>();
  /** Load failures by file (relative to the tools folder); the last good version keeps serving. */
  readonly #errors = new Map<string, ToolLoadError>();
  readonly #onChange: (change: RegistryChange) => void;
  #generation = 0;

  constructor(options: { onChange?: (change: RegistryChange) => void } = {}) {
    this.#onChange = options.onChange ?? (() => undefined);
  }

  /** Bumped on every change; lets clients (MCP, caches) tell the list moved. */
  get generation(): number {
    return this.#generation;
  }

  registerBuiltin(tool: BuiltinTool): void {
    if (this.#tools.has(tool.name)) throw new RegistryError('name_taken', `A tool named "${tool.name}" is already registered.`);
    this.#tools.set(tool.name, Object.freeze({ source: 'builtin', tool }));
    this.#generation++;
  }

  isBuiltin(name: string): boolean {
    return this.#tools.get(name)?.source === 'builtin';
  }

  /** Swaps in a user version. Calls that already hold the previous version finish on it. */
  setUser(version: UserToolVersion): void {
    const previous = this.#tools.get(version.name);
    if (previous?.source === 'builtin') throw new RegistryError('builtin_protected', `"${version.name}" is a built-in tool; a user tool cannot replace it.`);
    if (previous?.source === 'user' && previous.version.file !== version.file) {
      throw new RegistryError('name_taken', `The tool name "${version.name}" is already used by ${previous.version.file}.`);
    }
    if (previous?.source === 'user' && previous.version.bundle.hash === version.bundle.hash) return;
    this.#tools.set(version.name, Object.freeze({ source: 'user', version }));
    this.#generation++;
    this.#onChange({ type: previous === undefined ? 'tool-added' : 'tool-replaced', name: version.name, hash: version.bundle.hash });
  }

  removeUser(name: string): void {
    const entry = this.#tools.get(name);
    if (entry === undefined) return;
    if (entry.source === 'builtin') throw new RegistryError('builtin_protected', `"${name}" is a built-in tool and cannot be removed.`);
    this.#tools.delete(name);
    this.#generation++;
    this.#onChange({ type: 'tool-removed', name });
  }

  lookup(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  /** The user tool that lives in `file` (relative to the tools folder), if any. */
  userToolOfFile(file: string): UserToolVersion | undefined {
    for (const entry of this.#tools.values()) if (entry.source === 'user' && entry.version.file === file) return entry.version;
    return undefined;
  }

  userTools(): UserToolVersion[] {
    return [...this.#tools.values()].flatMap((entry) => (entry.source === 'user' ? [entry.version] : []));
  }

  builtins(): BuiltinTool[] {
    return [...this.#tools.values()].flatMap((entry) => (entry.source === 'builtin' ? [entry.tool] : []));
  }

  setError(error: ToolLoadError): void {
    this.#errors.set(error.file, error);
  }

  clearError(file: string): void {
    this.#errors.delete(file);
  }

  errors(): ToolLoadError[] {
    return [...this.#errors.values()];
  }

  /** Descriptions of every tool, built-ins first, each group by name. */
  describeAll(): ToolDescription[] {
    const described = [...this.#tools.values()].map(describe);
    return described.sort((a, b) => (a.source === b.source ? a.name.localeCompare(b.name) : a.source === 'builtin' ? -1 : 1));
  }
}

export function describe(entry: RegisteredTool): ToolDescription {
  if (entry.source === 'builtin') {
    const { tool } = entry;
    return { name: tool.name, description: tool.description, parameters: tool.parameters, kind: tool.kind, mode: tool.mode, source: 'builtin', permissions: tool.permissions ?? {} };
  }
  const { version } = entry;
  return { name: version.name, description: version.description, parameters: version.parameters, kind: version.kind, mode: version.mode, source: 'user', permissions: version.permissions };
}

/** A user tool's kind follows from what it may touch: it cannot present itself as more harmless. */
export function kindOfPermissions(permissions: PermissionSet): UserToolVersion['kind'] {
  const has = (value: PermissionSet['net']): boolean => value === true || (Array.isArray(value) && value.length > 0);
  if (has(permissions.write)) return 'write';
  if (has(permissions.net)) return 'web';
  return 'read';
}
