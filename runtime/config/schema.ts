import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';

/**
 * The one JSON Schema for Paddock's configuration. ajv validates the config file and the
 * environment against it at start; `Config` below is derived from it, so the type and the check
 * cannot drift apart. Every default lives here (`default:`), applied by ajv's `useDefaults`.
 */

export const SCOPES = ['admin', 'invoke'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A plain `enum` keyword (not TypeBox's anyOf of consts), so a wrong value gets one clear error. */
function stringEnum<const Values extends readonly string[]>(values: Values, options: Record<string, unknown> = {}) {
  return Type.Unsafe<Values[number]>({ type: 'string', enum: [...values], ...options });
}

const ApiKeyEntry = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', description: 'Caller name used in logs and audit records.' }),
    sha256: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: 'SHA-256 of the key, hex. The key itself never appears in the config file (`paddock key` prints both).',
    }),
    policy: Type.Optional(Type.String({
      pattern: '^[A-Za-z0-9._-]{1,64}$', default: 'default',
      description: 'Name of the grant policy (in "policies") that bounds what tools called with this key may do.',
    })),
    scopes: Type.Array(stringEnum(SCOPES), {
      minItems: 1,
      uniqueItems: true,
      description: '`admin` manages tools and sessions and implies `invoke`; `invoke` lists and calls tools, exec, sessions.',
    }),
  },
  { additionalProperties: false },
);

const HttpSection = Type.Object(
  {
    maxBodyBytes: Type.Integer({
      minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024,
      description: 'Largest request body accepted; larger bodies get 413 before they are read whole.',
    }),
    shutdownGraceMs: Type.Integer({
      minimum: 0, maximum: 300_000, default: 10_000,
      description: 'On SIGTERM/SIGINT, how long in-flight requests may take to finish before the process exits.',
    }),
    headersTimeoutMs: Type.Integer({
      minimum: 1000, maximum: 300_000, default: 30_000,
      description: 'Slow-client bound: time allowed to receive the request headers.',
    }),
  },
  { additionalProperties: false, default: {} },
);

const LogSection = Type.Object(
  {
    level: stringEnum(LOG_LEVELS, { default: 'info' }),
    auditMaxFileMiB: Type.Integer({ minimum: 1, maximum: 65_536, default: 64, description: 'Size at which <dataDir>/audit.jsonl is rotated to audit.1.jsonl.' }),
    auditKeepFiles: Type.Integer({ minimum: 0, maximum: 1000, default: 4, description: 'Rotated audit files kept (audit.1.jsonl ... audit.N.jsonl); older ones are overwritten.' }),
    deniedWarningsPerMinute: Type.Integer({ minimum: 0, maximum: 100_000, default: 60, description: 'Capability denials logged as warnings per minute; beyond, one line counts the rest (the audit file has them all).' }),
  },
  { additionalProperties: false, default: {} },
);

const LlmSection = Type.Object(
  {
    baseUrl: Type.String({
      format: 'uri', default: 'https://api.openai.com/v1',
      description: 'OpenAI-compatible chat-completions endpoint (OPENAI_BASE_URL).',
    }),
    apiKey: Type.Optional(Type.String({ minLength: 1, description: 'Key for the model endpoint (OPENAI_API_KEY).' })),
    model: Type.String({ minLength: 1, default: 'gpt-4o-mini', description: 'Default model (PADDOCK_MODEL).' }),
    requestTimeoutMs: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 120_000, description: 'Time for a whole answer, or for a streamed one to start; then the attempt is retried.' }),
    idleTimeoutMs: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 60_000, description: 'A streamed answer silent this long is abandoned and retried.' }),
    maxRetries: Type.Integer({ minimum: 0, maximum: 20, default: 3, description: 'Retries after the first attempt (timeouts, 429, 5xx, connection errors, malformed answers).' }),
    retryBaseMs: Type.Integer({ minimum: 1, maximum: 60_000, default: 500, description: 'First backoff delay, doubled per retry with ±25% jitter.' }),
    retryMaxMs: Type.Integer({ minimum: 1, maximum: 600_000, default: 20_000, description: 'Longest backoff delay, and the longest Retry-After waited for.' }),
  },
  { additionalProperties: false, default: {} },
);

const PermissionValue = Type.Union([Type.Boolean(), Type.Array(Type.String({ minLength: 1 }), { maxItems: 1000 })]);

/** What a caller's tools may be granted at most (Deno flag semantics: true = all, a list = only those). */
const Policy = Type.Object(
  {
    net: Type.Optional(PermissionValue),
    read: Type.Optional(PermissionValue),
    write: Type.Optional(PermissionValue),
    env: Type.Optional(PermissionValue),
  },
  { additionalProperties: false },
);

const LimitsSection = Type.Object(
  {
    wallTimeMs: Type.Integer({ minimum: 10, maximum: 900_000, default: 10_000, description: 'Wall-clock budget per call.' }),
    cpuTimeMs: Type.Integer({ minimum: 10, maximum: 900_000, default: 5_000, description: 'CPU time per call.' }),
    heapMiB: Type.Integer({ minimum: 8, maximum: 4096, default: 64, description: 'V8 heap per isolate.' }),
    maxOutputBytes: Type.Integer({ minimum: 1024, maximum: 67_108_864, default: 1_048_576, description: 'Result, logs and updates together.' }),
    maxFetchBytes: Type.Integer({ minimum: 1024, maximum: 1_073_741_824, default: 10_485_760, description: 'Largest fetch request or response body.' }),
    maxFileBytes: Type.Integer({ minimum: 1024, maximum: 1_073_741_824, default: 10_485_760, description: 'Largest file read or written in one operation.' }),
  },
  { additionalProperties: false, default: {} },
);

const SandboxSection = Type.Object(
  {
    workers: Type.Integer({ minimum: 0, maximum: 64, default: 0, description: 'Sandbox worker processes; 0 means one per core.' }),
    callsPerWorker: Type.Integer({ minimum: 1, maximum: 64, default: 4, description: 'CPU-busy calls one worker runs at once; calls awaiting I/O (a fetch, a timer) do not count.' }),
    maxCallsPerWorker: Type.Integer({
      minimum: 1, maximum: 4096, default: 256,
      description: 'Calls one worker holds at once, busy or idle (~2.5 MB each while awaiting I/O): bounds its memory under rssLimitMiB.',
    }),
    warmIsolates: Type.Integer({ minimum: 0, maximum: 32, default: 2, description: 'Prepared isolates each worker keeps ready.' }),
    rssLimitMiB: Type.Integer({
      minimum: 128, maximum: 65_536, default: 1024,
      description: 'Memory ceiling per worker: above it the worker is replaced (RSS checked every 250 ms; held by the kernel where a memory cgroup is available).',
    }),
    memoryCgroup: Type.String({
      pattern: '^(auto|off|/.*)$', default: 'auto',
      description: 'Memory cgroups for workers: "auto" (this process\'s cgroup v1 memory controller, when writable), "off", or the absolute path of a delegated cgroup directory.',
    }),
    workerNiceSteps: Type.Integer({
      minimum: 0, maximum: 19, default: 10,
      description: 'How many nice steps below the service workers run: when tools keep every core busy, the service still gets the CPU first. 0: the same priority.',
    }),
    maxConcurrentCalls: Type.Integer({ minimum: 1, maximum: 10_000, default: 16, description: 'Tool calls running at once, service-wide.' }),
    maxQueuedCalls: Type.Integer({ minimum: 0, maximum: 100_000, default: 64, description: 'Calls waiting beyond that; past it, HTTP 429.' }),
    limits: LimitsSection,
  },
  { additionalProperties: false, default: {} },
);

const SecretValue = Type.Union([
  Type.String(),
  Type.Object({ env: Type.String({ minLength: 1, description: 'Take the value from this variable of the service environment.' }) }, { additionalProperties: false }),
]);

const NAME_PATTERN = '^[A-Za-z0-9._-]{1,64}$';
const ToolNameList = Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' }), { uniqueItems: true, maxItems: 1000, default: [] });

/** How a session's agent works (SPEC §6): model, instructions, tools, grant policy, limits. */
const ProfileEntry = Type.Object(
  {
    description: Type.Optional(Type.String({ maxLength: 1000, description: 'Shown by list_profiles.' })),
    model: Type.Optional(Type.String({ minLength: 1, description: 'Model for this profile; llm.model when absent.' })),
    systemPrompt: Type.Optional(Type.String({ maxLength: 200_000, description: 'The system message sent before the conversation.' })),
    tools: Type.Object(
      {
        allow: { ...ToolNameList, description: 'Tools offered beyond the read-only view (tools of kind read), by name.' },
        deny: { ...ToolNameList, description: 'Tools never offered in this profile, whatever else allows them.' },
      },
      { additionalProperties: false, default: {} },
    ),
    policy: Type.Optional(Type.String({
      pattern: NAME_PATTERN,
      description: 'A grant policy (in "policies") that narrows the caller key\'s own policy for tool calls in these sessions; it never widens it.',
    })),
    maxSteps: Type.Integer({ minimum: 1, maximum: 1000, default: 25, description: 'Model calls per run at most (the step limit).' }),
    maxContextChars: Type.Integer({
      minimum: 1000, maximum: 100_000_000, default: 400_000,
      description: 'Characters of the session\'s context sent to the model per request at most (about 4 a token): past it, the oldest messages are left out of the request (the session keeps them).',
    }),
    writes: Type.Boolean({ default: false, description: 'Open tools of every kind (edit, write, execute, web); without it a session is read-only.' }),
    stream: Type.Boolean({ default: true, description: 'Ask the model for streamed answers.' }),
    switchTo: Type.Array(Type.String({ pattern: NAME_PATTERN }), {
      uniqueItems: true, maxItems: 100, default: [], description: 'Profiles a session may move to with switch_profile.',
    }),
    maxSpawnDepth: Type.Integer({ minimum: 0, maximum: 5, default: 1, description: 'How deep spawn_agent may nest sub-agents (0: none).' }),
  },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    host: Type.String({
      minLength: 1, default: '127.0.0.1',
      description: 'Address to listen on (PADDOCK_HOST). A non-loopback address requires configured API keys.',
    }),
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 8787, description: 'TCP port (PADDOCK_PORT); 0 picks a free one.' }),
    dataDir: Type.String({ minLength: 1, default: './.paddock', description: 'Data folder (PADDOCK_DATA): generated key, database, audit log.' }),
    toolsDir: Type.String({ minLength: 1, default: './tools', description: 'User tool modules (PADDOCK_TOOLS).' }),
    apiKeys: Type.Array(ApiKeyEntry, {
      default: [],
      description: 'Bearer keys. PADDOCK_API_KEYS (`name:key[:scope]`, comma-separated) adds to these.',
    }),
    workspaceDir: Type.Optional(Type.String({
      minLength: 1,
      description: 'Working directory of tool calls: relative paths in tools and grants resolve against it. Default: <dataDir>/workspace.',
    })),
    manualsDir: Type.String({ minLength: 1, default: './manuals', description: 'Tool manuals (Markdown), one per tool.' }),
    http: HttpSection,
    log: LogSection,
    llm: LlmSection,
    sandbox: SandboxSection,
    policies: Type.Record(Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' }), Policy, {
      default: { default: {} },
      description: 'Grant policies by name. A key uses "default" unless it names another. The default policy grants nothing.',
    }),
    secrets: Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' }), SecretValue, {
      default: {},
      description: 'The only values Deno.env can read in tools (when granted): literal strings or { "env": "NAME" } references.',
    }),
    profiles: Type.Record(Type.String({ pattern: NAME_PATTERN }), ProfileEntry, {
      default: { default: {} },
      description: 'Agent profiles by name. A session uses "default" unless it names another; "default" always exists (read-only unless configured).',
    }),
  },
  { additionalProperties: false },
);

export type ConfigFile = Static<typeof ConfigSchema>;
/** The loaded configuration: paths absolute, derived defaults filled in. */
export type Config = Omit<ConfigFile, 'workspaceDir'> & { workspaceDir: string };
export type ApiKeyConfig = Static<typeof ApiKeyEntry>;
export type ProfileConfig = Static<typeof ProfileEntry>;
export { ProfileEntry as ProfileSchema };
export type Scope = (typeof SCOPES)[number];
