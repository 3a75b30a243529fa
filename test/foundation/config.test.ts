/**
 * Pins: the configuration is the embedded defaults, overlaid by the config file, then PADDOCK_* /
 * OPENAI_* variables, then the serve flags; relative paths resolve against the working directory;
 * every mistake is one precise line (source, JSON pointer, expected, found) and all mistakes are
 * reported together; a secret value never appears in an error.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashKey } from '../../runtime/auth/keys.ts';
import { ConfigError, freezeConfig, loadConfig } from '../../runtime/config/load.ts';
import type { LoadConfigOptions } from '../../runtime/config/load.ts';
import { tempDir } from '../helpers/temp.ts';

const CWD = '/srv/paddock';
const SHA = 'a'.repeat(64);

async function configFile(content: unknown): Promise<string> {
  const file = path.join(await tempDir(), 'paddock.json');
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** The problems loadConfig reports, or a failure when it accepts the configuration. */
function problemsOf(options: Partial<LoadConfigOptions>): readonly string[] {
  try {
    loadConfig({ env: {}, cwd: CWD, ...options });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  expect.fail('loadConfig accepted a configuration with a mistake');
}

const ALLOWED_TOP_LEVEL = 'host, port, dataDir, toolsDir, apiKeys, workspaceDir, manualsDir, http, log, llm, sandbox, policies, secrets, profiles';
/** The "default" profile as the embedded defaults make it: read-only, 25 steps, streamed. */
const DEFAULT_PROFILE = { tools: { allow: [], deny: [] }, maxSteps: 25, maxContextChars: 400_000, writes: false, stream: true, switchTo: [], maxSpawnDepth: 1 };
const LEVELS = '"fatal", "error", "warn", "info", "debug", "trace", "silent"';

describe('defaults', () => {
  it('are the embedded defaults of SPEC §9 with paths resolved against the working directory', () => {
    expect(loadConfig({ env: {}, cwd: CWD })).toEqual({
      host: '127.0.0.1',
      port: 8787,
      dataDir: '/srv/paddock/.paddock',
      toolsDir: '/srv/paddock/tools',
      apiKeys: [],
      workspaceDir: '/srv/paddock/.paddock/workspace',
      manualsDir: '/srv/paddock/manuals',
      http: { maxBodyBytes: 1_048_576, shutdownGraceMs: 10_000, headersTimeoutMs: 30_000 },
      log: { level: 'info', auditMaxFileMiB: 64, auditKeepFiles: 4, deniedWarningsPerMinute: 60 },
      llm: { baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', requestTimeoutMs: 120_000, idleTimeoutMs: 60_000, maxRetries: 3, retryBaseMs: 500, retryMaxMs: 20_000 },
      sandbox: {
        workers: 0, callsPerWorker: 4, maxCallsPerWorker: 256, warmIsolates: 2, rssLimitMiB: 1024, memoryCgroup: 'auto', workerNiceSteps: 10, maxConcurrentCalls: 16, maxQueuedCalls: 64,
        limits: { wallTimeMs: 10_000, cpuTimeMs: 5_000, heapMiB: 64, maxOutputBytes: 1_048_576, maxFetchBytes: 10_485_760, maxFileBytes: 10_485_760 },
      },
      policies: { default: {} },
      secrets: {},
      profiles: { default: DEFAULT_PROFILE },
    });
  });

  it('ignores empty and blank environment variables', () => {
    const config = loadConfig({ env: { PADDOCK_PORT: '', PADDOCK_HOST: '  ', PADDOCK_API_KEYS: '' }, cwd: CWD });
    expect(config.port).toBe(8787);
    expect(config.host).toBe('127.0.0.1');
    expect(config.apiKeys).toEqual([]);
  });
});

describe('precedence: defaults < file < environment < flags', () => {
  it('takes each setting from the highest source that sets it', async () => {
    const file = await configFile({
      host: '127.0.0.2', port: 9000, dataDir: 'file-data', toolsDir: '/opt/tools',
      http: { shutdownGraceMs: 500 }, log: { level: 'warn' }, llm: { model: 'file-model' },
    });
    const config = loadConfig({
      configPath: file,
      env: { PADDOCK_HOST: '127.0.0.3', PADDOCK_PORT: '9001', PADDOCK_MODEL: 'env-model', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
      cwd: CWD,
      flags: { port: '9002' },
    });
    expect(config).toMatchObject({
      host: '127.0.0.3', // env over file
      port: 9002, // flag over env over file
      dataDir: '/srv/paddock/file-data', // file, relative to the working directory (not to the file)
      toolsDir: '/opt/tools', // absolute stays
      apiKeys: [],
      http: { maxBodyBytes: 1_048_576, shutdownGraceMs: 500, headersTimeoutMs: 30_000 }, // file value, other defaults kept
      log: { level: 'warn' },
      llm: { baseUrl: 'http://127.0.0.1:9/v1', model: 'env-model' },
      workspaceDir: '/srv/paddock/file-data/workspace', // derived from dataDir
    });
  });

  it('lets --host win over PADDOCK_HOST', () => {
    const config = loadConfig({ env: { PADDOCK_HOST: '127.0.0.3' }, cwd: CWD, flags: { host: '::1' } });
    expect(config.host).toBe('::1');
  });

  it('reads the file named by PADDOCK_CONFIG, and --config over it, relative to the working directory', async () => {
    const fromEnv = await configFile({ port: 1111 });
    const fromFlag = await configFile({ port: 2222 });
    expect(loadConfig({ env: { PADDOCK_CONFIG: fromEnv }, cwd: CWD }).port).toBe(1111);
    expect(loadConfig({ configPath: fromFlag, env: { PADDOCK_CONFIG: fromEnv }, cwd: CWD }).port).toBe(2222);
    expect(loadConfig({ configPath: path.basename(fromFlag), env: {}, cwd: path.dirname(fromFlag) }).port).toBe(2222);
  });

  it('resolves PADDOCK_DATA and PADDOCK_TOOLS against the working directory', () => {
    const config = loadConfig({ env: { PADDOCK_DATA: 'var/../state', PADDOCK_TOOLS: '/abs/tools' }, cwd: CWD });
    expect(config.dataDir).toBe('/srv/paddock/state');
    expect(config.toolsDir).toBe('/abs/tools');
  });

  it('adds PADDOCK_API_KEYS to the file keys, hashed, with invoke as the default scope', async () => {
    const file = await configFile({ apiKeys: [{ name: 'operator', sha256: SHA, scopes: ['admin'] }] });
    const config = loadConfig({
      configPath: file, env: { PADDOCK_API_KEYS: 'ci:ci-key-0123456789ab, ops:ops-key-0123456789ab:admin' }, cwd: CWD,
    });
    expect(config.apiKeys).toEqual([
      { name: 'operator', sha256: SHA, policy: 'default', scopes: ['admin'] },
      { name: 'ci', sha256: hashKey('ci-key-0123456789ab'), policy: 'default', scopes: ['invoke'] },
      { name: 'ops', sha256: hashKey('ops-key-0123456789ab'), policy: 'default', scopes: ['admin'] },
    ]);
    expect(JSON.stringify(config)).not.toContain('key-0123456789ab');
  });

  it('reads the model settings from OPENAI_API_KEY and PADDOCK_LOG_LEVEL', () => {
    const config = loadConfig({ env: { OPENAI_API_KEY: 'sk-test', PADDOCK_LOG_LEVEL: 'debug' }, cwd: CWD });
    expect(config.llm.apiKey).toBe('sk-test');
    expect(config.log.level).toBe('debug');
  });
});

describe('mistakes in the config file', () => {
  it('names an unknown key and lists the allowed ones, at the top level and in a section', async () => {
    const file = await configFile({ prot: 1, http: { maxBody: 5 } });
    expect(problemsOf({ configPath: file })).toEqual([
      `${file} /: unknown key "prot"; allowed keys: ${ALLOWED_TOP_LEVEL}`,
      `${file} /http: unknown key "maxBody"; allowed keys: maxBodyBytes, shutdownGraceMs, headersTimeoutMs`,
    ]);
  });

  it('reports a wrong type with what was expected and found', async () => {
    const file = await configFile({ port: '8080', http: 5 });
    expect(problemsOf({ configPath: file })).toEqual([
      `${file} /port: expected integer, found "8080"`,
      `${file} /http: expected object, found 5`,
    ]);
  });

  it('reports an out-of-range port and a bad enum value', async () => {
    const file = await configFile({ port: 70000, log: { level: 'loud' } });
    expect(problemsOf({ configPath: file })).toEqual([
      `${file} /port: expected a number <= 65535, found 70000`,
      `${file} /log/level: expected one of ${LEVELS}, found "loud"`,
    ]);
  });

  it('takes "auto", "off" or an absolute cgroup directory for sandbox.memoryCgroup', async () => {
    const file = await configFile({ sandbox: { memoryCgroup: 'paddock' } });
    expect(problemsOf({ configPath: file })).toEqual([
      `${file} /sandbox/memoryCgroup: expected a string matching ^(auto|off|/.*)$, found "paddock"`,
    ]);
    const good = await configFile({ sandbox: { memoryCgroup: '/sys/fs/cgroup/paddock' } });
    expect(loadConfig({ env: {}, cwd: CWD, configPath: good }).sandbox.memoryCgroup).toBe('/sys/fs/cgroup/paddock');
  });

  it('reports malformed JSON with the file and the position', async () => {
    const file = await configFile('{\n  "port": 8080,\n}\n');
    expect(problemsOf({ configPath: file })).toEqual([
      `${file}: not valid JSON: Expected double-quoted property name in JSON at position 18 (line 3 column 1)`,
    ]);
  });

  it('reports a missing file by its resolved path', async () => {
    const dir = await tempDir();
    expect(problemsOf({ configPath: 'nope.json', cwd: dir })).toEqual([
      `${path.join(dir, 'nope.json')}: cannot read the config file (no such file)`,
    ]);
  });

  it('refuses a top level that is not an object', async () => {
    const array = await configFile('[1, 2]');
    const text = await configFile('"port"');
    expect(problemsOf({ configPath: array })).toEqual([`${array}: expected a JSON object at the top level, found an array of 2`]);
    expect(problemsOf({ configPath: text })).toEqual([`${text}: expected a JSON object at the top level, found "port"`]);
  });

  it('reports a key entry that is incomplete or holds the raw key instead of its hash', async () => {
    const file = await configFile({ apiKeys: [{ name: 'ci', scopes: ['invoke'], key: 'raw-secret-key-123456' }] });
    expect(problemsOf({ configPath: file })).toEqual([
      `${file} /apiKeys/0: missing required key "sha256"`,
      `${file} /apiKeys/0: unknown key "key"; allowed keys: name, sha256, policy, scopes`,
    ]);
  });
});

describe('mistakes in the environment and flags', () => {
  it('names PADDOCK_PORT or --port for a port that is not a number or out of range', () => {
    expect(problemsOf({ env: { PADDOCK_PORT: 'http' } })).toEqual(['PADDOCK_PORT: expected an integer from 0 to 65535, found "http"']);
    expect(problemsOf({ env: { PADDOCK_PORT: '70000' } })).toEqual(['PADDOCK_PORT /port: expected a number <= 65535, found 70000']);
    expect(problemsOf({ flags: { port: '-1' } })).toEqual(['--port: expected an integer from 0 to 65535, found "-1"']);
    expect(problemsOf({ env: { PADDOCK_PORT: '8080' }, flags: { port: '99999' } })).toEqual([
      '--port /port: expected a number <= 65535, found 99999',
    ]);
  });

  it('names the variable that set a bad enum value', () => {
    expect(problemsOf({ env: { PADDOCK_LOG_LEVEL: 'chatty' } })).toEqual([
      `PADDOCK_LOG_LEVEL /log/level: expected one of ${LEVELS}, found "chatty"`,
    ]);
    expect(problemsOf({ env: { OPENAI_BASE_URL: 'not a url' } })).toEqual([
      'OPENAI_BASE_URL /llm/baseUrl: expected a uri, found "not a url"',
    ]);
  });

  it('reports every malformed PADDOCK_API_KEYS entry by its position, never showing the key', () => {
    const env = {
      PADDOCK_API_KEYS: [
        'lonely-secret-value-1',
        'a:too:many:secret-parts-2',
        'bad name:long-enough-secret-3',
        'ci:short',
        'ops:long-enough-secret-5:root',
      ].join(','),
    };
    const problems = problemsOf({ env });
    expect(problems).toEqual([
      'PADDOCK_API_KEYS entry 1: expected name:key or name:key:scope, found 1 part(s)',
      'PADDOCK_API_KEYS entry 2: expected name:key or name:key:scope, found 4 part(s)',
      'PADDOCK_API_KEYS entry 3: the name must match ^[A-Za-z0-9._-]{1,64}$, found "bad name"',
      'PADDOCK_API_KEYS entry 4 ("ci"): the key must be at least 16 characters long, found 5',
      'PADDOCK_API_KEYS entry 5 ("ops"): expected the scope to be one of admin, invoke, found "root"',
    ]);
    expect(problems.join('\n')).not.toMatch(/secret|short/);
  });

  it('refuses two keys with the same name, across the file and the environment or within one', async () => {
    const file = await configFile({ apiKeys: [{ name: 'ci', sha256: SHA, scopes: ['invoke'] }] });
    expect(problemsOf({ configPath: file, env: { PADDOCK_API_KEYS: 'ci:another-key-0123456' } })).toEqual([
      'apiKeys: the name "ci" is used by more than one key',
    ]);
    expect(problemsOf({ env: { PADDOCK_API_KEYS: 'x:first-key-0123456789,x:second-key-012345' } })).toEqual([
      'apiKeys: the name "x" is used by more than one key',
    ]);
  });

  it('reports mistakes from every source together', async () => {
    const file = await configFile({ bogus: true });
    const problems = problemsOf({ configPath: file, env: { PADDOCK_PORT: 'x', PADDOCK_API_KEYS: 'solo' } });
    expect(problems).toEqual([
      'PADDOCK_PORT: expected an integer from 0 to 65535, found "x"',
      'PADDOCK_API_KEYS entry 1: expected name:key or name:key:scope, found 1 part(s)',
      `${file} /: unknown key "bogus"; allowed keys: ${ALLOWED_TOP_LEVEL}`,
    ]);
    let message = '';
    try {
      loadConfig({ configPath: file, env: { PADDOCK_PORT: 'x' }, cwd: CWD });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      `config errors:\n  PADDOCK_PORT: expected an integer from 0 to 65535, found "x"\n  ${file} /: unknown key "bogus"; allowed keys: ${ALLOWED_TOP_LEVEL}`,
    );
  });
});

describe('secrets in errors', () => {
  it('hides the value of a bad secret setting', async () => {
    const file = await configFile({
      llm: { apiKey: 12345678901234 },
      apiKeys: [{ name: 'ci', sha256: 'my-raw-secret-key-not-a-hash', scopes: ['invoke'] }],
    });
    const problems = problemsOf({ configPath: file });
    expect(problems).toEqual([
      `${file} /apiKeys/0/sha256: expected a string matching ^[0-9a-f]{64}$, found (value hidden)`,
      `${file} /llm/apiKey: expected string, found (value hidden)`,
    ]);
  });

  it('does not quote the file when a secret is left unquoted and the JSON breaks on it', async () => {
    const file = await configFile('{"llm": {"apiKey": sk-live-0123456789abcdef}}');
    const problems = problemsOf({ configPath: file });
    expect(problems).toEqual([`${file}: not valid JSON: Unexpected token 's' in JSON at position 19 (line 1 column 20)`]);
    expect(problems.join('\n')).not.toContain('live');
  });
});

describe('profiles', () => {
  it('fill in every default, and "default" exists even when only others are configured', async () => {
    const file = await configFile({
      policies: { narrow: { net: ['example.com'] } },
      profiles: { writer: { writes: true, model: 'big-model', systemPrompt: 'Write.', tools: { deny: ['code_exec'] }, policy: 'narrow', switchTo: ['default'] } },
    });
    const config = loadConfig({ configPath: file, env: {}, cwd: CWD });
    expect(config.profiles).toEqual({
      default: DEFAULT_PROFILE,
      writer: {
        ...DEFAULT_PROFILE, writes: true, model: 'big-model', systemPrompt: 'Write.', tools: { allow: [], deny: ['code_exec'] }, policy: 'narrow', switchTo: ['default'],
      },
    });
  });

  it('report a policy or a profile to switch to that does not exist', async () => {
    const file = await configFile({ profiles: { default: { policy: 'ghost', switchTo: ['nowhere'] } } });
    expect(problemsOf({ configPath: file })).toEqual([
      'profiles: the profile "default" names the policy "ghost", which "policies" does not define',
      'profiles: the profile "default" may switch to "nowhere", which "profiles" does not define',
    ]);
  });

  it('report unknown keys, bad tool names and out-of-range limits precisely', async () => {
    const file = await configFile({ profiles: { p: { maxSteps: 0, tools: { allow: ['Bad-Name'] }, write: true } } });
    expect(problemsOf({ configPath: file })).toEqual([
      `${file} /profiles/p: unknown key "write"; allowed keys: description, model, systemPrompt, tools, policy, maxSteps, maxContextChars, writes, stream, switchTo, maxSpawnDepth`,
      `${file} /profiles/p/tools/allow/0: expected a string matching ^[a-z][a-z0-9_]{0,63}$, found "Bad-Name"`,
      `${file} /profiles/p/maxSteps: expected a number >= 1, found 0`,
    ]);
  });
});

describe('freezeConfig', () => {
  it('gives the service a deep-frozen copy and leaves the loaded object as it was', () => {
    const loaded = loadConfig({ env: {}, cwd: '/srv/paddock' });
    const frozen = freezeConfig(loaded);
    expect(frozen).toEqual(loaded);
    expect(() => { (frozen.sandbox as { workers: number }).workers = 99; }).toThrow(TypeError);
    expect(() => { (frozen.policies as Record<string, unknown>)['open'] = { net: true }; }).toThrow(TypeError);
    expect(() => { (frozen.apiKeys as unknown[]).push({}); }).toThrow(TypeError);
    loaded.sandbox.workers = 3;
    expect(frozen.sandbox.workers).not.toBe(3);
  });
});
