/**
 * Pins: startService on a real loopback socket: it serves the app on the configured port (0 = a free
 * one), creates or reuses the generated key and logs its file, never the key; a port in use, a
 * non-loopback host without configured keys and an unwritable data folder each stop the start with
 * one clear StartupError; shutdown refuses new connections at once, lets a request in flight
 * finish, and cuts what is still running when the grace period ends.
 */
import { chmod, readFile, readdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../runtime/config/load.ts';
import type { Config } from '../../runtime/config/schema.ts';
import { StartupError, isLoopback, startService } from '../../runtime/service.ts';
import type { RunningService } from '../../runtime/service.ts';
import { INVOKE_KEY, TEST_KEYS, bearer, captureLog } from '../helpers/app.ts';
import type { LogCapture } from '../helpers/app.ts';
import { startSlowUpload, tryConnect } from '../helpers/http.ts';
import { tempDir } from '../helpers/temp.ts';

async function serviceConfig(overrides: Partial<Config> = {}): Promise<Config> {
  const cwd = await tempDir();
  return { ...loadConfig({ env: {}, cwd, flags: { port: '0' } }), ...overrides };
}

/**
 * Starts the HTTP shell (no sandbox workers: the tool system has its own suites) and stops it
 * (at once) when the test ends, whatever happened in between.
 */
async function start(config: Config): Promise<{ service: RunningService; logs: LogCapture }> {
  const logs = captureLog();
  const service = await startService(config, logs.log, { tools: false });
  onTestFinished(async () => { await service.shutdown(0); });
  return { service, logs };
}

async function startupError(config: Config): Promise<StartupError> {
  const error = await startService(config, captureLog().log, { tools: false }).then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(StartupError);
  return error as StartupError;
}

describe('startService on loopback', () => {
  it('serves on a free port, with a generated key whose file, not value, is logged', async () => {
    const config = await serviceConfig();
    const { service, logs } = await start(config);
    expect(service.url).toBe(`http://127.0.0.1:${service.port}`);
    expect(service.port).toBeGreaterThan(0);

    const health = await fetch(`${service.url}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await health.json()).toMatchObject({ status: 'ok' });

    const keyFile = path.join(config.dataDir, 'api-key');
    const key = (await readFile(keyFile, 'utf8')).trim();
    const whoami = await fetch(`${service.url}/v1/whoami`, { headers: bearer(key) });
    expect(await whoami.json()).toEqual({ name: 'local-admin', scopes: ['admin'] });

    expect(logs.records().slice(0, 2)).toMatchObject([
      { level: 'info', keyFile, created: true, msg: 'no API key configured: created one (scope admin); read it from the key file' },
      { level: 'info', url: service.url, dataDir: config.dataDir, msg: 'paddock listening' },
    ]);
    expect(logs.text()).not.toContain(key);
  });

  it('reuses the generated key on the next start', async () => {
    const config = await serviceConfig();
    const first = await start(config);
    await first.service.shutdown();
    const key = (await readFile(path.join(config.dataDir, 'api-key'), 'utf8')).trim();
    const second = await start(config);
    expect(second.logs.records()[0]).toMatchObject({ created: false, msg: 'no API key configured: using the key in the key file' });
    expect((await fetch(`${second.service.url}/v1/whoami`, { headers: bearer(key) })).status).toBe(200);
  });

  it('creates no key file when keys are configured', async () => {
    const config = await serviceConfig({ apiKeys: TEST_KEYS });
    const { service } = await start(config);
    expect(await readdir(config.dataDir)).toEqual([]);
    expect(await (await fetch(`${service.url}/v1/whoami`, { headers: bearer(INVOKE_KEY) })).json()).toEqual({ name: 'ci', scopes: ['invoke'] });
  });

  it('answers over the socket with the same problems: 413 declared and streamed, 400 malformed JSON', async () => {
    const config = await serviceConfig({ apiKeys: TEST_KEYS });
    config.http.maxBodyBytes = 2048;
    const { service } = await start(config);
    const headers = { ...bearer(INVOKE_KEY), 'content-type': 'application/json' };
    const tooLarge = 'The request body exceeds the limit of 2048 bytes.';

    const declared = await fetch(`${service.url}/v1/whoami`, { method: 'POST', headers, body: `[${' '.repeat(4096)}]` });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ detail: tooLarge });

    // Chunked, and never ended: the 413 can only arrive if the server answers before the body is whole.
    const streamed = startSlowUpload(`${service.url}/v1/whoami`, bearer(INVOKE_KEY), `[${' '.repeat(3000)}`);
    onTestFinished(() => { streamed.abort(); });
    const outcome = await streamed.outcome;
    expect(outcome).toMatchObject({ status: 413 });
    expect(JSON.parse((outcome as { body: string }).body)).toMatchObject({ detail: tooLarge });

    const malformed = await fetch(`${service.url}/v1/whoami`, { method: 'POST', headers, body: '{"a": nope}' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({
      detail: "Malformed JSON in the request body: Unexpected token 'o' in JSON at position 7 (line 1 column 8).",
    });
  });
});

describe('start-up refusals', () => {
  it('refuses a port that is already in use', async () => {
    const { service } = await start(await serviceConfig({ apiKeys: TEST_KEYS }));
    const error = await startupError(await serviceConfig({ apiKeys: TEST_KEYS, port: service.port }));
    expect(error.message).toBe(`cannot listen on 127.0.0.1:${service.port}: the address is already in use`);
  });

  it.each(['0.0.0.0', '::', '192.0.2.10'])('refuses the non-loopback host %s without configured keys', async (host) => {
    const error = await startupError(await serviceConfig({ host }));
    expect(error.message).toBe(
      `refusing to listen on ${host} without configured API keys: set PADDOCK_API_KEYS or "apiKeys" in the config file, or listen on 127.0.0.1`,
    );
  });

  it('refuses a data folder it cannot create (a path under a regular file)', async () => {
    const blocker = path.join(await tempDir(), 'a-file');
    await writeFile(blocker, '');
    const dataDir = path.join(blocker, 'data');
    const error = await startupError(await serviceConfig({ dataDir }));
    expect(error.message).toBe(
      `the data folder ${dataDir} is not writable (ENOTDIR); set PADDOCK_DATA or "dataDir" to a folder this user can write`,
    );
  });

  it('refuses a generated key file that others can read', async () => {
    const config = await serviceConfig();
    const file = path.join(config.dataDir, 'api-key');
    await start(config).then(({ service }) => service.shutdown());
    await chmod(file, 0o644);
    const error = await startupError(config);
    expect(error.message).toBe(`the key file ${file} is accessible to other users (mode 644); run: chmod 600 ${file}`);
  });
});

describe('isLoopback', () => {
  it.each(['localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '::ffff:127.0.0.1'])('counts %s as loopback', (host) => {
    expect(isLoopback(host)).toBe(true);
  });

  it.each(['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'example.com', '::ffff:10.0.0.1', 'localhost.example.com'])('does not count %s', (host) => {
    expect(isLoopback(host)).toBe(false);
  });
});

describe('shutdown', () => {
  it('refuses new connections at once and lets a request in flight finish', async () => {
    const config = await serviceConfig({ apiKeys: TEST_KEYS });
    const { service, logs } = await start(config);
    const agent = new http.Agent({ keepAlive: true });
    onTestFinished(() => { agent.destroy(); });
    // The JSON document is cut in two: only a server that reads the second half after the shutdown
    // began sees a complete document, and then answers that /v1/whoami does not take POST.
    const upload = startSlowUpload(`${service.url}/v1/whoami`, bearer(INVOKE_KEY), '{"sent": "before", "then":', agent);
    await upload.inFlight;

    const stopped = service.shutdown(5000);
    expect(await tryConnect(service.url)).toBe('ECONNREFUSED');
    upload.finish(' "after"}');
    const outcome = await upload.outcome;
    expect(outcome).toMatchObject({ status: 405 });
    expect(JSON.parse((outcome as { body: string }).body)).toMatchObject({ detail: '/v1/whoami does not take POST; it takes GET, HEAD.' });
    expect(await stopped).toEqual({ forced: false });
    expect(logs.records().map((record) => record['msg']).slice(-3)).toEqual([
      'shutting down: no new connections; waiting for in-flight requests', 'request', 'shut down',
    ]);
  });

  it('cuts a request still in flight when the grace period ends', async () => {
    const config = await serviceConfig({ apiKeys: TEST_KEYS });
    const { service, logs } = await start(config);
    const upload = startSlowUpload(`${service.url}/v1/whoami`, bearer(INVOKE_KEY), '{"never": ');
    await upload.inFlight;
    expect(await service.shutdown(200)).toEqual({ forced: true });
    expect(await upload.outcome).toEqual({ error: 'ECONNRESET' });
    expect(logs.records()).toContainEqual(expect.objectContaining({ level: 'warn', graceMs: 200, msg: 'grace period over: closing the remaining connections' }));
    expect(await tryConnect(service.url)).toBe('ECONNREFUSED');
  });

  it('does not wait for idle keep-alive connections', async () => {
    const { service } = await start(await serviceConfig({ apiKeys: TEST_KEYS }));
    const agent = new http.Agent({ keepAlive: true });
    onTestFinished(() => { agent.destroy(); });
    const status = await new Promise<number>((resolve) => {
      http.get(`${service.url}/healthz`, { agent }, (response) => {
        response.resume();
        response.once('end', () => { resolve(response.statusCode ?? 0); });
      });
    });
    expect(status).toBe(200);
    const started = performance.now();
    expect(await service.shutdown(10_000)).toEqual({ forced: false });
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
