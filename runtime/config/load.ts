import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import type { ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { hashKey } from '../auth/keys.ts';
import { describeJsonSyntaxError } from '../json-syntax-error.ts';
import { ConfigSchema, ProfileSchema, SCOPES } from './schema.ts';
import type { Config, ConfigFile, ProfileConfig, Scope } from './schema.ts';

/** A configuration that cannot be used. `problems` holds one precise line per mistake. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(problems.length === 1 ? `config error: ${problems[0] ?? ''}` : `config errors:\n  ${problems.join('\n  ')}`);
    this.name = new.target.name;
    this.problems = problems;
  }
}

export interface LoadConfigOptions {
  /** Path from `--config`; falls back to PADDOCK_CONFIG. No path means embedded defaults. */
  configPath?: string | undefined;
  /** The process environment, passed in so that nothing else reads it. */
  env: Readonly<Record<string, string | undefined>>;
  /** Base for relative paths in the config (the process working directory). */
  cwd: string;
  /** Command-line flags (`serve --host/--port`); they win over the environment and the file. */
  flags?: { host?: string | undefined; port?: string | undefined };
}

// ajv-formats is CommonJS with a default export that Node's ESM interop wraps once more.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
// `verbose` puts `parentSchema` on each error: an unknown key is reported with the keys allowed there.
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, allowUnionTypes: true, verbose: true });
addFormats(ajv);
const validateConfig = ajv.compile<ConfigFile>(ConfigSchema);
const validateProfile = ajv.compile<ProfileConfig>(ProfileSchema);

/** Loads, merges (defaults < file < environment) and validates the configuration, or throws ConfigError. */
export function loadConfig(options: LoadConfigOptions): Config {
  const { env, cwd } = options;
  const configPath = options.configPath ?? nonEmpty(env['PADDOCK_CONFIG']);
  const fileLabel = configPath === undefined ? undefined : path.resolve(cwd, configPath);
  const raw: Record<string, unknown> = fileLabel === undefined ? {} : readConfigFile(fileLabel);

  const problems: string[] = [];
  const sources = new Map<string, string>(); // JSON pointer -> env var, to name the real source of a bad value
  const flags = flagVariables(options.flags);
  const labelOf = (variable: string): string => (variable in flags ? FLAG_NAMES.get(variable) : undefined) ?? variable;
  const envKeys = applyEnvironment(raw, { ...env, ...flags }, labelOf, sources, problems);

  const candidate = structuredClone(raw);
  if (!validateConfig(candidate)) {
    for (const error of validateConfig.errors ?? []) {
      problems.push(describeAjvError(error, candidate, (pointer) => sources.get(pointer) ?? fileLabel ?? 'defaults'));
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const loaded = candidate as ConfigFile;
  const config: Config = { ...loaded, workspaceDir: loaded.workspaceDir ?? path.join(loaded.dataDir, 'workspace') };
  config.apiKeys = [...config.apiKeys, ...envKeys];
  const duplicate = firstDuplicate(config.apiKeys.map((key) => key.name));
  if (duplicate !== undefined) throw new ConfigError([`apiKeys: the name "${duplicate}" is used by more than one key`]);
  config.dataDir = path.resolve(cwd, config.dataDir);
  config.toolsDir = path.resolve(cwd, config.toolsDir);
  config.workspaceDir = path.resolve(cwd, config.workspaceDir);
  config.manualsDir = path.resolve(cwd, config.manualsDir);
  // "default" always exists (granting nothing unless the operator defines it), so keys need not name a policy.
  if (!Object.hasOwn(config.policies, 'default')) config.policies['default'] = {};
  for (const key of config.apiKeys) {
    if (!Object.hasOwn(config.policies, key.policy ?? 'default')) {
      throw new ConfigError([`apiKeys: the key "${key.name}" names the policy "${key.policy ?? 'default'}", which "policies" does not define`]);
    }
  }
  // "default" always exists too: a session that names no profile uses it (read-only, its defaults).
  if (!Object.hasOwn(config.profiles, 'default')) config.profiles['default'] = profileDefaults();
  const profileProblems = checkProfiles(config);
  if (profileProblems.length > 0) throw new ConfigError(profileProblems);
  return config;
}

/**
 * A deep-frozen copy for the running service: nothing after start-up can change a limit, a policy
 * or a key behind the operator's back (an assignment throws, modules being strict). The caller's
 * object stays as it was.
 */
export function freezeConfig(config: Config): Readonly<Config> {
  return deepFreeze(structuredClone(config));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** A profile with every default filled in. */
function profileDefaults(): ProfileConfig {
  const profile = {};
  if (!validateProfile(profile)) throw new Error('the profile defaults do not validate');
  return profile;
}

/** Names a profile refers to (a policy, profiles to switch to) must exist. */
function checkProfiles(config: Config): string[] {
  const problems: string[] = [];
  for (const [name, profile] of Object.entries(config.profiles)) {
    if (profile.policy !== undefined && !Object.hasOwn(config.policies, profile.policy)) {
      problems.push(`profiles: the profile "${name}" names the policy "${profile.policy}", which "policies" does not define`);
    }
    for (const target of profile.switchTo) {
      if (!Object.hasOwn(config.profiles, target)) problems.push(`profiles: the profile "${name}" may switch to "${target}", which "profiles" does not define`);
    }
  }
  return problems;
}

const FLAG_NAMES = new Map([['PADDOCK_HOST', '--host'], ['PADDOCK_PORT', '--port']]);

/** Flags ride on the environment path (same parsing, same checks) and are then named as flags in errors. */
function flagVariables(flags: LoadConfigOptions['flags']): Record<string, string> {
  const variables: Record<string, string> = {};
  if (flags?.host !== undefined) variables['PADDOCK_HOST'] = flags.host;
  if (flags?.port !== undefined) variables['PADDOCK_PORT'] = flags.port;
  return variables;
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError([`${file}: cannot read the config file (${code === 'ENOENT' ? 'no such file' : code ?? 'unknown error'})`]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${file}: not valid JSON: ${describeJsonSyntaxError(text, error)}`]);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError([`${file}: expected a JSON object at the top level, found ${describeValue(parsed)}`]);
  }
  return parsed as Record<string, unknown>;
}

type EnvKey = Config['apiKeys'][number];

/** Overlays PADDOCK_* and OPENAI_* variables on the file's values; returns keys from PADDOCK_API_KEYS, hashed. */
function applyEnvironment(
  raw: Record<string, unknown>,
  env: LoadConfigOptions['env'],
  labelOf: (variable: string) => string,
  sources: Map<string, string>,
  problems: string[],
): EnvKey[] {
  const set = (pointer: string[], variable: string, value: unknown): void => {
    let target = raw;
    for (const key of pointer.slice(0, -1)) {
      const next = target[key];
      if (typeof next !== 'object' || next === null || Array.isArray(next)) target[key] = {};
      target = target[key] as Record<string, unknown>;
    }
    target[pointer.at(-1) ?? ''] = value;
    sources.set(`/${pointer.join('/')}`, labelOf(variable));
  };

  const strings: [string, string[]][] = [
    ['PADDOCK_HOST', ['host']],
    ['PADDOCK_DATA', ['dataDir']],
    ['PADDOCK_TOOLS', ['toolsDir']],
    ['PADDOCK_LOG_LEVEL', ['log', 'level']],
    ['OPENAI_BASE_URL', ['llm', 'baseUrl']],
    ['OPENAI_API_KEY', ['llm', 'apiKey']],
    ['PADDOCK_MODEL', ['llm', 'model']],
  ];
  for (const [variable, pointer] of strings) {
    const value = nonEmpty(env[variable]);
    if (value !== undefined) set(pointer, variable, value);
  }

  const port = nonEmpty(env['PADDOCK_PORT']);
  if (port !== undefined) {
    if (/^\d{1,5}$/.test(port)) set(['port'], 'PADDOCK_PORT', Number(port));
    else problems.push(`${labelOf('PADDOCK_PORT')}: expected an integer from 0 to 65535, found ${JSON.stringify(port)}`);
  }

  const keys = nonEmpty(env['PADDOCK_API_KEYS']);
  return keys === undefined ? [] : parseKeyList(keys, problems);
}

/** `name:key[:scope]`, comma-separated. The key is hashed at once; only its hash is kept. */
function parseKeyList(list: string, problems: string[]): EnvKey[] {
  const keys: EnvKey[] = [];
  list.split(',').forEach((item, index) => {
    const where = `PADDOCK_API_KEYS entry ${index + 1}`;
    const parts = item.trim().split(':');
    const [name, key, scope = 'invoke'] = parts;
    if (parts.length < 2 || parts.length > 3 || name === undefined || key === undefined) {
      problems.push(`${where}: expected name:key or name:key:scope, found ${parts.length} part(s)`);
      return;
    }
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
      problems.push(`${where}: the name must match ^[A-Za-z0-9._-]{1,64}$, found ${JSON.stringify(name)}`);
      return;
    }
    if (key.length < 16) {
      problems.push(`${where} ("${name}"): the key must be at least 16 characters long, found ${key.length}`);
      return;
    }
    if (!(SCOPES as readonly string[]).includes(scope)) {
      problems.push(`${where} ("${name}"): expected the scope to be one of ${SCOPES.join(', ')}, found ${JSON.stringify(scope)}`);
      return;
    }
    keys.push({ name, sha256: hashKey(key), policy: 'default', scopes: [scope as Scope] });
  });
  return keys;
}

const SECRET_KEY = /key|secret|token|password|sha256/i;

/** One line per ajv error: where (pointer and source), what was expected, what was found. */
function describeAjvError(error: ErrorObject, root: unknown, sourceOf: (pointer: string) => string): string {
  const pointer = error.instancePath === '' ? '/' : error.instancePath;
  const found = valueAt(root, error.instancePath);
  const shown = SECRET_KEY.test(error.instancePath) ? '(value hidden)' : describeValue(found);
  const params = error.params as Record<string, unknown>;
  let what: string;
  switch (error.keyword) {
    case 'additionalProperties': {
      const allowed = Object.keys(propertiesAt(error.parentSchema)).filter((key) => key !== '$schema');
      what = `unknown key ${JSON.stringify(params['additionalProperty'])}; allowed keys: ${allowed.join(', ')}`;
      break;
    }
    case 'required':
      what = `missing required key ${JSON.stringify(params['missingProperty'])}`;
      break;
    case 'type':
      what = `expected ${String(params['type'])}, found ${shown}`;
      break;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      what = `expected a number ${String(params['comparison'])} ${String(params['limit'])}, found ${shown}`;
      break;
    case 'pattern':
      what = `expected a string matching ${String(params['pattern'])}, found ${shown}`;
      break;
    case 'format':
      what = `expected a ${String(params['format'])}, found ${shown}`;
      break;
    case 'const':
      what = `expected ${JSON.stringify(params['allowedValue'])}, found ${shown}`;
      break;
    case 'enum':
      what = `expected one of ${(params['allowedValues'] as unknown[]).map((value) => JSON.stringify(value)).join(', ')}, found ${shown}`;
      break;
    default:
      what = `${error.message ?? 'invalid'}, found ${shown}`;
  }
  return `${sourceOf(error.instancePath)} ${pointer}: ${what}`;
}

function propertiesAt(schema: unknown): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties ?? {};
}

function valueAt(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let value = root;
  for (const part of pointer.slice(1).split('/')) {
    const key = part.replaceAll('~1', '/').replaceAll('~0', '~');
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function firstDuplicate(names: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}
