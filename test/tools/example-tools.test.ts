/**
 * Pins the shipped tool modules: tools/_template.ts is skipped by the loader but works as a tool
 * once copied; get_current_datetime and weather load (the loader's checks, as `paddock check`) and
 * run in the sandbox, and give the same output under real Deno. weather is tested against a fake
 * Open-Meteo on loopback, reached by granting that literal address and setting WEATHER_API_BASE.
 */
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../runtime/auth/keys.ts';
import { parseRunArgs } from '../../runtime/cli/run-args.ts';
import { runToolOn } from '../../runtime/cli/run-command.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import { startToolSystem } from '../../runtime/coordinator/tool-system.ts';
import type { ToolSystem } from '../../runtime/coordinator/tool-system.ts';
import { createLogger } from '../../runtime/observability/logger.ts';
import { builtinTools } from '../../runtime/tools/builtins/index.ts';
import type { UserToolVersion } from '../../runtime/tools/contract.ts';
import { runUnderDeno } from '../../scripts/deno-run.ts';

const REPO = path.resolve(import.meta.dirname, '../..');
const caller: Caller = { name: 'ci', scopes: ['admin'], policy: 'default' };
let base: string;
let system: ToolSystem;
let server: Server;
let port: number;
const requests: URL[] = [];

/** Open-Meteo's two endpoints, shaped as the real ones answer. */
function fakeOpenMeteo(): Server {
  return createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    requests.push(url);
    const json = (status: number, body: unknown): void => { response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)); };
    if (url.pathname === '/v1/search') {
      if (url.searchParams.get('name') === 'Oslo') {
        json(200, { results: [{ id: 3143244, name: 'Oslo', latitude: 59.91273, longitude: 10.74609, country: 'Norway', admin1: 'Oslo', timezone: 'Europe/Oslo' }], generationtime_ms: 0.5 });
      } else {
        json(200, { generationtime_ms: 0.4 });
      }
      return;
    }
    if (url.pathname === '/v1/forecast') {
      const imperial = url.searchParams.get('temperature_unit') === 'fahrenheit';
      json(200, {
        latitude: 59.9, longitude: 10.75, timezone: 'Europe/Oslo',
        current_units: { time: 'iso8601', temperature_2m: imperial ? '°F' : '°C', apparent_temperature: imperial ? '°F' : '°C', relative_humidity_2m: '%', weather_code: 'wmo code', wind_speed_10m: imperial ? 'mp/h' : 'km/h', wind_direction_10m: '°' },
        current: { time: '2026-01-15T12:00', interval: 900, temperature_2m: imperial ? 26.6 : -3, apparent_temperature: imperial ? 17.2 : -8.2, relative_humidity_2m: 81, weather_code: 71, wind_speed_10m: imperial ? 7.8 : 12.6, wind_direction_10m: 225 },
      });
      return;
    }
    json(404, { error: true, reason: 'Not Found' });
  });
}

function userTool(name: string): UserToolVersion {
  const entry = system.registry.lookup(name);
  if (entry?.source !== 'user') throw new Error(`${name} is not loaded`);
  return entry.version;
}

/** Runs a loaded tool in the sandbox with an explicit grant (the loopback address is not declared, so the coordinator's intersection would drop it). */
async function runWithGrant(name: string, params: unknown, grant: { net: string[]; env: string[] }, secrets: Record<string, string>) {
  const version = userTool(name);
  return system.sandbox.runTool({
    identity: { callId: `test-${name}`, tool: name, caller: 'ci' },
    bundle: version.bundle, params, grant: { ...grant, read: [], write: [] }, cwd: base, secrets,
  });
}

function deno(argv: string[], env: Record<string, string> = {}) {
  return runUnderDeno(argv, { cwd: REPO, env: { ...process.env, ...env }, output: 'capture' });
}

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'paddock-examples-'));
  const tools = path.join(base, 'tools');
  await mkdir(tools);
  for (const file of ['_template.ts', 'get_current_datetime.ts', 'weather.ts', 'enabled.json']) await copyFile(path.join(REPO, 'tools', file), path.join(tools, file));
  await copyFile(path.join(REPO, 'tools', '_template.ts'), path.join(tools, 'template_echo.ts'));
  server = fakeOpenMeteo();
  await new Promise<void>((resolve) => { server.listen(0, '127.0.0.1', resolve); });
  port = (server.address() as AddressInfo).port;
  const config = loadConfig({ env: { PADDOCK_DATA: path.join(base, 'data'), PADDOCK_TOOLS: tools }, cwd: base });
  config.sandbox.workers = 1;
  system = await startToolSystem({ config, log: createLogger('silent'), env: {}, builtins: builtinTools(), watch: false });
});

afterAll(async () => {
  await system.close();
  await new Promise((resolve) => server.close(resolve));
  await rm(base, { recursive: true, force: true });
});

describe('loading', () => {
  it('loads the examples with their declarations and skips _template.ts', () => {
    expect(system.registry.errors()).toEqual([]);
    const users = system.registry.describeAll().filter((tool) => tool.source === 'user');
    expect(users.map((tool) => [tool.name, tool.kind, tool.permissions])).toEqual([
      ['get_current_datetime', 'read', {}],
      ['template_echo', 'read', {}],
      ['weather', 'web', { net: ['api.open-meteo.com', 'geocoding-api.open-meteo.com'], env: ['WEATHER_API_BASE'] }],
    ]);
    expect(userTool('template_echo').file).toBe('template_echo.ts');
  });
});

describe('_template.ts', () => {
  it('runs once copied: validated params, streamed updates, a ToolResult with metadata', async () => {
    const updates: string[] = [];
    const outcome = await system.coordinator.invoke('template_echo', { caller, params: { text: 'hi', times: 3, uppercase: true }, onUpdate: (text) => updates.push(text) });
    expect(outcome).toMatchObject({ ok: true, content: 'HI HI HI', metadata: { times: 3, length: 8 } });
    expect(updates).toEqual(['1/3', '2/3', '3/3']);
  });
});

describe('get_current_datetime', () => {
  const ISO = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)([+-]\d\d:\d\d|Z) \((\w+day), ([^)]+)\)$/;

  it('gives the current instant in a named zone, with its offset and weekday', async () => {
    const outcome = await system.coordinator.invoke('get_current_datetime', { caller, params: { timezone: 'Asia/Tokyo' } });
    expect(outcome.ok).toBe(true);
    const match = ISO.exec(outcome.content);
    expect(match?.slice(2)).toEqual(['+09:00', expect.stringMatching(/day$/), 'Asia/Tokyo']);
    expect(Math.abs(Date.parse(`${match?.[1] ?? ''}+09:00`) - Date.now())).toBeLessThan(5000);
    expect(outcome.metadata).toMatchObject({ timezone: 'Asia/Tokyo', offset: '+09:00' });
  });

  it('defaults to UTC, accepts fixed offsets, and explains an unknown zone', async () => {
    const utc = await system.coordinator.invoke('get_current_datetime', { caller, params: {} });
    expect(utc.content).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\w+day, UTC\)$/);
    const offset = await system.coordinator.invoke('get_current_datetime', { caller, params: { timezone: '-03:30' } });
    expect(offset.content).toMatch(/-03:30 \(\w+day, UTC-03:30\)$/);
    const unknown = await system.coordinator.invoke('get_current_datetime', { caller, params: { timezone: 'Mars/Olympus' } });
    expect(unknown).toMatchObject({ ok: false, content: 'Unknown time zone "Mars/Olympus". Use an IANA name such as "Europe/Paris" or "America/New_York", or a UTC offset such as "+05:30".' });
  });

  it('gives the same answer under real Deno', async () => {
    const underDeno = await deno(['tools/get_current_datetime.ts', '--params', '{"timezone":"America/New_York"}']);
    expect(underDeno).toMatchObject({ code: 0, stderr: '' });
    const paddock = await system.coordinator.invoke('get_current_datetime', { caller, params: { timezone: 'America/New_York' } });
    const [denoMatch, paddockMatch] = [ISO.exec(underDeno.stdout.trimEnd()), ISO.exec(paddock.content)];
    expect(denoMatch?.slice(2)).toEqual(paddockMatch?.slice(2));
    expect(Math.abs(Date.parse(denoMatch?.[1] ?? '') - Date.parse(paddockMatch?.[1] ?? ''))).toBeLessThan(5000);
  });
});

describe('weather', () => {
  const expected = 'Oslo, Norway: -3 °C (feels like -8.2 °C), slight snowfall; humidity 81 %, wind 12.6 km/h from the SW. Observed 2026-01-15T12:00 local time (Europe/Oslo).';

  it('reads a fake Open-Meteo on loopback when that literal address is granted and WEATHER_API_BASE points at it', async () => {
    requests.length = 0;
    const outcome = await runWithGrant('weather', { city: 'Oslo' }, { net: [`127.0.0.1:${port}`], env: ['WEATHER_API_BASE'] }, { WEATHER_API_BASE: `http://127.0.0.1:${port}/` });
    expect(outcome).toMatchObject({ ok: true, isError: false, content: expected });
    expect(requests.map((url) => url.pathname)).toEqual(['/v1/search', '/v1/forecast']);
    expect(Object.fromEntries(requests[1]?.searchParams ?? [])).toMatchObject({ latitude: '59.91273', longitude: '10.74609', timezone: 'auto' });

    const imperial = await runWithGrant('weather', { city: 'Oslo', units: 'imperial' }, { net: [`127.0.0.1:${port}`], env: ['WEATHER_API_BASE'] }, { WEATHER_API_BASE: `http://127.0.0.1:${port}` });
    expect(imperial).toMatchObject({ ok: true, content: expect.stringContaining('26.6 °F (feels like 17.2 °F), slight snowfall; humidity 81 %, wind 7.8 mp/h') });
  });

  it('says when a city is not found', async () => {
    const outcome = await runWithGrant('weather', { city: 'Nowhereville' }, { net: [`127.0.0.1:${port}`], env: ['WEATHER_API_BASE'] }, { WEATHER_API_BASE: `http://127.0.0.1:${port}` });
    expect(outcome).toMatchObject({ ok: true, isError: true, content: 'No place named "Nowhereville" was found. Check the spelling, or try the nearest larger city.' });
  });

  it('without the env grant uses the public hosts, which a policy that grants nothing refuses', async () => {
    const denied = await system.coordinator.invoke('weather', { caller, params: { city: 'Oslo' } });
    expect(denied).toMatchObject({ ok: false, error: { kind: 'not_capable', message: 'Requires net access to "geocoding-api.open-meteo.com:443", run again with the --allow-net flag' } });
    const loopbackWithoutLiteral = await runWithGrant('weather', { city: 'Oslo' }, { net: ['api.open-meteo.com'], env: ['WEATHER_API_BASE'] }, { WEATHER_API_BASE: `http://127.0.0.1:${port}` });
    expect(loopbackWithoutLiteral).toMatchObject({ ok: false, error: { name: 'NotCapable', message: `Requires net access to "127.0.0.1:${port}", run again with the --allow-net flag` } });
  });

  it('gives the same output under real Deno, for the answer and for the denial', async () => {
    const underDeno = await deno(['tools/weather.ts', '--params', '{"city":"Oslo"}', `--allow-net=127.0.0.1:${port}`, '--allow-env=WEATHER_API_BASE'], { WEATHER_API_BASE: `http://127.0.0.1:${port}` });
    expect(underDeno).toEqual({ code: 0, stdout: `${expected}\n`, stderr: '' });

    const denoDenied = await deno(['tools/weather.ts', '--params', '{"city":"Oslo"}']);
    const paddockOut: string[] = [];
    const paddockCode = await runToolOn(system.sandbox, parseRunArgs([path.join(REPO, 'tools/weather.ts'), '--params', '{"city":"Oslo"}']), {
      stdout: (text) => paddockOut.push(text), stderr: (text) => paddockOut.push(text), env: {}, cwd: REPO,
    });
    expect(denoDenied).toEqual({ code: 1, stdout: '', stderr: 'error: NotCapable: Requires net access to "geocoding-api.open-meteo.com:443", run again with the --allow-net flag\n' });
    expect([paddockCode, paddockOut.join('')]).toEqual([denoDenied.code, denoDenied.stderr]);
  });
});
