import { parseArgs } from 'node:util';
import { hashKey, newKey } from '../auth/keys.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import { createLogger } from '../observability/logger.ts';
import { StartupError, startService } from '../service.ts';
import { PADDOCK_VERSION } from '../version.ts';

const USAGE = `Usage: paddock <command> [options]

Commands:
  serve     Start the HTTP service (what "npm start" runs)
  key       Create a new API key and print its config entry (only the hash goes in the config)

Options:
  -h, --help     Show help (also "paddock <command> --help")
  -v, --version  Print the version
`;

const SERVE_USAGE = `Usage: paddock serve [--config <file>] [--host <address>] [--port <number>]

Starts the Paddock service. Settings come from the embedded defaults, then the config file
(--config or PADDOCK_CONFIG), then PADDOCK_* environment variables, then these flags.

Options:
  --config <file>    JSON config file (see paddock.example.json)
  --host <address>   Address to listen on (default 127.0.0.1)
  --port <number>    TCP port (default 8787; 0 picks a free one)
  -h, --help         Show this help

Stops on SIGTERM or SIGINT: new connections are refused and in-flight requests get
http.shutdownGraceMs to finish; then the process exits 0.
`;

const KEY_USAGE = `Usage: paddock key [--name <caller>] [--scope admin|invoke]

Prints a new random API key and the "apiKeys" entry (with the key's SHA-256) to put in the config
file. Give the key to the caller; the config file never holds it.
`;

/** Exit codes: 0 ok, 1 failure at run time, 2 bad usage or configuration. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    case '-v':
    case '--version':
      process.stdout.write(`paddock ${PADDOCK_VERSION}\n`);
      return 0;
    case 'serve':
      return serveCommand(rest);
    case 'key':
      return keyCommand(rest);
    default:
      process.stderr.write(`error: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

async function serveCommand(args: readonly string[]): Promise<number> {
  const parsed = parseCommandArgs(args, {
    config: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' }, help: { type: 'boolean', short: 'h' },
  }, SERVE_USAGE);
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;

  let config;
  try {
    config = loadConfig({
      configPath: values['config'] as string | undefined,
      env: process.env,
      cwd: process.cwd(),
      flags: { host: values['host'] as string | undefined, port: values['port'] as string | undefined },
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }

  const log = createLogger(config.log.level);
  let service;
  try {
    service = await startService(config, log);
  } catch (error) {
    if (error instanceof StartupError) {
      process.stderr.write(`error: ${error.message}\n`);
      return 1;
    }
    throw error;
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting at once');
        resolve(1);
        return;
      }
      stopping = true;
      log.info({ signal }, 'signal received');
      service.shutdown().then(() => { resolve(0); }, (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        resolve(1);
      });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

function keyCommand(args: readonly string[]): number {
  const parsed = parseCommandArgs(args, {
    name: { type: 'string' }, scope: { type: 'string' }, help: { type: 'boolean', short: 'h' },
  }, KEY_USAGE);
  if (typeof parsed === 'number') return parsed;
  const name = (parsed.values['name'] as string | undefined) ?? 'client';
  const scope = (parsed.values['scope'] as string | undefined) ?? 'invoke';
  if (scope !== 'admin' && scope !== 'invoke') {
    process.stderr.write(`error: --scope must be admin or invoke, found "${scope}"\n`);
    return 2;
  }
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
    process.stderr.write(`error: --name must match ^[A-Za-z0-9._-]{1,64}$, found "${name}"\n`);
    return 2;
  }
  const key = newKey();
  process.stdout.write(`key: ${key}\nconfig entry: ${JSON.stringify({ name, sha256: hashKey(key), scopes: [scope] })}\n`);
  return 0;
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

/** Parses strictly; prints help or a one-line usage error and returns the exit code in those cases. */
function parseCommandArgs(args: readonly string[], options: Options, usage: string): { values: Record<string, unknown> } | number {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: false });
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  if ((parsed.values as Record<string, unknown>)['help'] === true) {
    process.stdout.write(usage);
    return 0;
  }
  return { values: parsed.values };
}

/** Runs the CLI and exits the process with its code. */
export function runCli(argv: readonly string[]): void {
  main(argv).then((code) => { process.exit(code); }, (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}

if (import.meta.main) runCli(process.argv.slice(2));
