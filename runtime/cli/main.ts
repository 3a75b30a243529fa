import { parseArgs } from 'node:util';
import { hashKey, newKey } from '../auth/keys.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import { createLogger } from '../observability/logger.ts';
import { StartupError, startService } from '../service.ts';
import { PADDOCK_VERSION } from '../version.ts';
import { checkCommand } from './check-command.ts';
import { UsageError } from './run-args.ts';
import { execCommand, runCommand } from './run-command.ts';
import type { CliIo } from './run-command.ts';

const USAGE = `Usage: paddock <command> [options]

Commands:
  serve     Start the HTTP service (what "npm start" runs)
  run       Run a tool module in the sandbox, like "deno run" (paddock run <file> --params '<json>' --allow-net=...)
  exec      Run a code_exec snippet in the sandbox (paddock exec -e '<code>' or <file>)
  check     Compile a tool module and check its exports (paddock check <file>)
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

const RUN_USAGE = `Usage: paddock run <tool-file> [--params '<json>'] [--allow-net[=hosts]] [--allow-read[=paths]]
                   [--allow-write[=paths]] [--allow-env[=names]]

Runs a tool module in its own isolate, as "deno run" would run it: the grant is these flags
intersected with the module's \`permissions\`; --allow-env values come from this environment, and
relative paths from this working directory. Prints the result's content to stdout and exits 0; a
failed call prints "error: <ErrorName>: <message>" to stderr and exits 1. Updates (ctx.update) go to
stderr as "update: <text>". scripts/deno-run.ts runs the same module under real Deno with the same
output, so the two can be compared byte for byte.
`;

const EXEC_USAGE = `Usage: paddock exec (-e '<code>' | <file>) [--language ts|js] [--allow-net[=...]] [--allow-read[=...]]
                    [--allow-write[=...]] [--allow-env[=...]]

Runs a code_exec snippet: the body of an async function (await and return work at top level) in a
fresh isolate with only the granted capabilities. Prints console output, then the returned value
(strings as they are, anything else as JSON).
`;

const CHECK_USAGE = `Usage: paddock check <tool-file>

Compiles a tool module with its relative imports, evaluates its top level in the sandbox with no
grant, and checks its exports: name, description, parameters (JSON Schema), permissions and the
default execute function. Prints every problem; exits 0 when the tool would load.
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
      process.stderr.write(USAGE);
      return 2;
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case '-v':
    case '--version':
      process.stdout.write(`paddock ${PADDOCK_VERSION}\n`);
      return 0;
    case 'serve':
      return serveCommand(rest);
    case 'key':
      return keyCommand(rest);
    case 'run':
      return sandboxCommand(rest, RUN_USAGE, runCommand);
    case 'exec':
      return sandboxCommand(rest, EXEC_USAGE, execCommand);
    case 'check':
      return sandboxCommand(rest, CHECK_USAGE, checkCommand);
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
  // A signal during start-up is kept and honoured as soon as the service is up (then it drains at once).
  let earlySignal: NodeJS.Signals | undefined;
  const keepSignal = (signal: NodeJS.Signals): void => { earlySignal ??= signal; };
  process.on('SIGTERM', keepSignal);
  process.on('SIGINT', keepSignal);
  let service;
  try {
    service = await startService(config, log, { env: process.env });
  } catch (error) {
    if (error instanceof StartupError) {
      process.stderr.write(`error: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    process.off('SIGTERM', keepSignal);
    process.off('SIGINT', keepSignal);
  }
  const running = service;

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
      running.shutdown().then(() => { resolve(0); }, (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        resolve(1);
      });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    if (earlySignal !== undefined) stop(earlySignal);
  });
}

async function sandboxCommand(args: readonly string[], usage: string, run: (args: readonly string[], io: CliIo) => Promise<number>): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(usage);
    return 0;
  }
  const io: CliIo = {
    stdout: (text) => { process.stdout.write(text); },
    stderr: (text) => { process.stderr.write(text); },
    env: process.env,
    cwd: process.cwd(),
  };
  try {
    return await run(args, io);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`error: ${error.message}\n\n${usage}`);
    return 2;
  }
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
