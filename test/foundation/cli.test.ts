/**
 * Pins: the CLI as operators run it, a child process on Node 24: --version and --help for each
 * command; bad usage or configuration is one clear line on stderr and exit 2; a start-up failure
 * is one line and exit 1; `paddock key` prints a key and the config entry holding its SHA-256;
 * `serve --port 0` logs where it listens, and on SIGTERM/SIGINT refuses new connections, lets a
 * request in flight finish (or cuts it when http.shutdownGraceMs ends) and exits 0.
 */
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { KeyStore, hashKey } from '../../runtime/auth/keys.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import { INVOKE_KEY, bearer } from '../helpers/app.ts';
import { runPaddock, spawnPaddock } from '../helpers/child.ts';
import { startSlowUpload, tryConnect } from '../helpers/http.ts';
import { tempDir } from '../helpers/temp.ts';
import type { OnFinished } from '../helpers/temp.ts';

const VERSION = packageJson.version;
const KEYS_ENV = { PADDOCK_API_KEYS: `ci:${INVOKE_KEY}` };

/** Starts `paddock serve --port 0` and resolves once it logs the URL it listens on. */
async function serve(onFinished: OnFinished, env: Record<string, string> = KEYS_ENV, args: string[] = []) {
  const cwd = await tempDir(onFinished);
  const paddock = spawnPaddock(['serve', '--port', '0', ...args], { cwd, env, onFinished });
  const listening = await paddock.logRecord('paddock listening');
  return { paddock, cwd, url: listening['url'] as string };
}

describe.concurrent('paddock CLI', () => {
  it('--version and -v print the package version', async ({ onTestFinished }) => {
    const cwd = await tempDir(onTestFinished);
    for (const flag of ['--version', '-v']) {
      expect(await runPaddock([flag], { cwd, onFinished: onTestFinished })).toEqual({
        code: 0, signal: null, stdout: `paddock ${VERSION}\n`, stderr: '',
      });
    }
  });

  it('--help lists the commands; no command at all is bad usage', async ({ onTestFinished }) => {
    const cwd = await tempDir(onTestFinished);
    const help = await runPaddock(['--help'], { cwd, onFinished: onTestFinished });
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: paddock <command> \[options\]\n/);
    expect(help.stdout).toMatch(/^ {2}serve {5}Start the HTTP service/m);
    expect(help.stdout).toMatch(/^ {2}key {7}Create a new API key/m);
    const bare = await runPaddock([], { cwd, onFinished: onTestFinished });
    expect(bare).toMatchObject({ code: 2, stdout: '', stderr: help.stdout });
  });

  it('serve --help and key --help describe their options', async ({ onTestFinished }) => {
    const cwd = await tempDir(onTestFinished);
    const serveHelp = await runPaddock(['serve', '--help'], { cwd, onFinished: onTestFinished });
    expect(serveHelp).toMatchObject({ code: 0, stderr: '' });
    expect(serveHelp.stdout).toMatch(/^Usage: paddock serve \[--config <file>\] \[--host <address>\] \[--port <number>\]\n/);
    expect(serveHelp.stdout).toContain('http.shutdownGraceMs');
    const keyHelp = await runPaddock(['key', '-h'], { cwd, onFinished: onTestFinished });
    expect(keyHelp).toMatchObject({ code: 0, stderr: '' });
    expect(keyHelp.stdout).toMatch(/^Usage: paddock key \[--name <caller>\] \[--scope admin\|invoke\]\n/);
  });

  it('refuses an unknown command, flag or argument with exit 2', async ({ onTestFinished }) => {
    const cwd = await tempDir(onTestFinished);
    const run = (args: string[]) => runPaddock(args, { cwd, onFinished: onTestFinished });
    const [command, flag, positional, scope] = await Promise.all([
      run(['launch']), run(['serve', '--bogus']), run(['serve', 'now']), run(['key', '--scope', 'root']),
    ]);
    expect(command).toMatchObject({ code: 2, stdout: '' });
    expect(command.stderr).toMatch(/^error: unknown command "launch"\n\nUsage: paddock <command>/);
    expect(flag).toMatchObject({ code: 2, stdout: '' });
    expect(flag.stderr).toMatch(/^error: Unknown option '--bogus'[^\n]*\n\nUsage: paddock serve /);
    expect(positional).toMatchObject({ code: 2, stdout: '' });
    expect(positional.stderr).toMatch(/^error: Unexpected argument 'now'[^\n]*\n\nUsage: paddock serve /);
    expect(scope).toEqual({ code: 2, signal: null, stdout: '', stderr: 'error: --scope must be admin or invoke, found "root"\n' });
  });

  it('reports a bad configuration as one line on stderr and exits 2 without starting', async ({ onTestFinished }) => {
    const cwd = await tempDir(onTestFinished);
    const run = (args: string[], env: Record<string, string> = {}) => runPaddock(['serve', ...args], { cwd, env, onFinished: onTestFinished });
    await writeFile(path.join(cwd, 'paddock.json'), '{"log": {"level": "loud"}}');
    const [flag, variable, missing, file] = await Promise.all([
      run(['--port', 'http']), run([], { PADDOCK_PORT: '70000' }), run(['--config', 'missing.json']), run([], { PADDOCK_CONFIG: 'paddock.json' }),
    ]);
    expect(flag).toEqual({
      code: 2, signal: null, stdout: '', stderr: 'config error: --port: expected an integer from 0 to 65535, found "http"\n',
    });
    expect(variable).toEqual({
      code: 2, signal: null, stdout: '', stderr: 'config error: PADDOCK_PORT /port: expected a number <= 65535, found 70000\n',
    });
    expect(missing).toEqual({
      code: 2, signal: null, stdout: '', stderr: `config error: ${path.join(cwd, 'missing.json')}: cannot read the config file (no such file)\n`,
    });
    expect(file).toEqual({
      code: 2, signal: null, stdout: '',
      stderr: `config error: ${path.join(cwd, 'paddock.json')} /log/level: expected one of "fatal", "error", "warn", "info", "debug", "trace", "silent", found "loud"\n`,
    });
  });

  it('reports a port in use, an unwritable data folder and an unprotected host as one line, exit 1', async ({ onTestFinished }) => {
    const cwd = await tempDir(onTestFinished);
    const occupied = net.createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => occupied.close(() => { resolve(); })));
    const port = (occupied.address() as net.AddressInfo).port;
    await writeFile(path.join(cwd, 'a-file'), '');
    const run = (args: string[], env: Record<string, string> = KEYS_ENV) => runPaddock(['serve', ...args], { cwd, env, onFinished: onTestFinished });

    const [inUse, dataDir, host] = await Promise.all([
      run(['--port', String(port)]),
      run(['--port', '0'], { ...KEYS_ENV, PADDOCK_DATA: 'a-file/data' }),
      run(['--host', '0.0.0.0', '--port', '0'], {}),
    ]);
    expect(inUse).toMatchObject({ code: 1, stderr: `error: cannot listen on 127.0.0.1:${port}: the address is already in use\n` });
    expect(dataDir).toMatchObject({
      code: 1,
      stderr: `error: the data folder ${path.join(cwd, 'a-file/data')} is not writable (ENOTDIR); set PADDOCK_DATA or "dataDir" to a folder this user can write\n`,
    });
    expect(host).toMatchObject({
      code: 1,
      stderr: 'error: refusing to listen on 0.0.0.0 without configured API keys: set PADDOCK_API_KEYS or "apiKeys" in the config file, or listen on 127.0.0.1\n',
    });
  });

  it('key prints a new key and the config entry with its SHA-256, which the config accepts', async ({ onTestFinished }) => {
    const cwd = await tempDir(onTestFinished);
    const printed = await runPaddock(['key', '--name', 'ci-bot', '--scope', 'admin'], { cwd, onFinished: onTestFinished });
    expect(printed).toMatchObject({ code: 0, stderr: '' });
    const match = /^key: (pdk_[A-Za-z0-9_-]{43})\nconfig entry: (\{.*\})\n$/.exec(printed.stdout);
    expect(match).not.toBeNull();
    const [, key = '', entryText = ''] = match ?? [];
    const entry = JSON.parse(entryText) as unknown;
    expect(entry).toEqual({ name: 'ci-bot', sha256: hashKey(key), scopes: ['admin'] });

    await writeFile(path.join(cwd, 'paddock.json'), JSON.stringify({ apiKeys: [entry] }));
    const config = loadConfig({ configPath: 'paddock.json', env: {}, cwd });
    expect(new KeyStore(config.apiKeys).verify(`Bearer ${key}`)).toEqual({ name: 'ci-bot', scopes: ['admin'], policy: 'default' });

    const defaults = await runPaddock(['key'], { cwd, onFinished: onTestFinished });
    expect(defaults.stdout).toMatch(/^key: pdk_\S+\nconfig entry: \{"name":"client","sha256":"[0-9a-f]{64}","scopes":\["invoke"\]\}\n$/);
    expect(defaults.stdout).not.toContain(key);
  });

  it('the npx entry (bin.js) runs the same CLI', async ({ onTestFinished }) => {
    expect(packageJson.bin.paddock).toBe('runtime/cli/bin.js');
    const cwd = await tempDir(onTestFinished);
    const result = spawnSync(process.execPath, [path.resolve(import.meta.dirname, '../../runtime/cli/bin.js'), '--version'], { cwd, encoding: 'utf8' });
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({ status: 0, stdout: `paddock ${VERSION}\n`, stderr: '' });
  });

  it('serve with no key configured creates one, logs its file and never the key, and stops on SIGINT', async ({ onTestFinished }) => {
    const { paddock, cwd, url } = await serve(onTestFinished, {});
    const keyFile = path.join(cwd, '.paddock', 'api-key');
    expect(await paddock.logRecord('no API key configured: created one (scope admin); read it from the key file'))
      .toMatchObject({ level: 'info', keyFile, created: true });
    const key = (await readFile(keyFile, 'utf8')).trim();
    const whoami = await fetch(`${url}/v1/whoami`, { headers: { ...bearer(key), connection: 'close' } });
    expect(await whoami.json()).toEqual({ name: 'local-admin', scopes: ['admin'] });

    paddock.child.kill('SIGINT');
    const exit = await paddock.exited;
    expect(exit).toMatchObject({ code: 0, signal: null, stderr: '' });
    expect(exit.stdout).not.toContain(key);
    expect(exit.stdout).toContain('"msg":"shut down"');
  });

  it('serve on SIGTERM refuses new connections, finishes the request in flight and exits 0 within the grace period', async ({ onTestFinished }) => {
    const { paddock, url } = await serve(onTestFinished);
    const agent = new http.Agent({ keepAlive: true });
    onTestFinished(() => { agent.destroy(); });
    // The document is split around the signal: only a server that reads its second half after
    // SIGTERM sees it whole, and then answers that /v1/whoami does not take POST (405, not 400).
    const upload = startSlowUpload(`${url}/v1/whoami`, bearer(INVOKE_KEY), '{"sent": "before", "then":', agent);
    await upload.inFlight;

    const signalled = performance.now();
    paddock.child.kill('SIGTERM');
    expect(await paddock.logRecord('shutting down: no new connections; waiting for in-flight requests')).toMatchObject({ graceMs: 10_000 });
    expect(await tryConnect(url)).toBe('ECONNREFUSED');
    upload.finish(' "after"}');
    const outcome = await upload.outcome;
    expect(outcome).toMatchObject({ status: 405 });
    expect(JSON.parse((outcome as { body: string }).body)).toMatchObject({ detail: '/v1/whoami does not take POST; it takes GET, HEAD.' });

    const exit = await paddock.exited;
    expect(exit).toMatchObject({ code: 0, signal: null, stderr: '' });
    expect(performance.now() - signalled).toBeLessThan(5000); // well within the 10 s grace: nothing was held open
    expect(await paddock.logRecord('shut down')).toMatchObject({ forced: false });
  });

  it('serve cuts a request still in flight when http.shutdownGraceMs ends, and still exits 0', async ({ onTestFinished }) => {
    const cwd = await tempDir(onTestFinished);
    await writeFile(path.join(cwd, 'paddock.json'), JSON.stringify({ http: { shutdownGraceMs: 300 } }));
    const paddock = spawnPaddock(['serve', '--port', '0', '--config', 'paddock.json'], { cwd, env: KEYS_ENV, onFinished: onTestFinished });
    const url = (await paddock.logRecord('paddock listening'))['url'] as string;
    const upload = startSlowUpload(`${url}/v1/whoami`, bearer(INVOKE_KEY), '{"never": ');
    await upload.inFlight;

    paddock.child.kill('SIGTERM');
    expect(await upload.outcome).toEqual({ error: 'ECONNRESET' });
    const exit = await paddock.exited;
    expect(exit).toMatchObject({ code: 0, signal: null, stderr: '' });
    expect(await paddock.logRecord('grace period over: closing the remaining connections')).toMatchObject({ level: 'warn', graceMs: 300 });
    expect(await paddock.logRecord('shut down')).toMatchObject({ forced: true });
  });
});
