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
  },
  { additionalProperties: false, default: {} },
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
    http: HttpSection,
    log: LogSection,
    llm: LlmSection,
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
export type ApiKeyConfig = Static<typeof ApiKeyEntry>;
export type Scope = (typeof SCOPES)[number];
