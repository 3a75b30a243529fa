import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleToolModule } from '../../sandbox/bundler/tool-bundle.ts';
import { CallError } from '../../sandbox/errors.ts';
import { InvalidGrantError, resolveGrant } from '../../sandbox/grants/index.ts';
import { DEFAULT_LIMITS } from '../../sandbox/limits.ts';
import { startSandbox } from '../../sandbox/sandbox.ts';
import type { LogLine, Sandbox } from '../../sandbox/sandbox.ts';
import type { WireGrant } from '../../sandbox/worker/messages.ts';
import { UsageError, parseRunArgs } from './run-args.ts';
import type { RunArgs } from './run-args.ts';

/**
 * `paddock run` and `paddock exec`: the local, single-user face of the sandbox, like `deno run`.
 * The grant is the flags ∩ what the module declares; `--allow-env` values come from this process's
 * environment, relative paths from its working directory. Output matches scripts/deno-run.ts.
 */

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}

const identity = (tool: string) => ({ callId: 'cli', tool, caller: 'cli' });

export async function runCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseRunArgs(argv);
  return withSandbox(io, (sandbox) => runToolOn(sandbox, args, io));
}

/**
 * One `paddock run` on a sandbox the caller owns (the conformance suite shares one across many
 * runs): bundle, describe, grant = flags ∩ declared permissions, run, and print as the CLI prints.
 */
export async function runToolOn(sandbox: Sandbox, args: RunArgs, io: CliIo): Promise<number> {
  try {
    return await runTool(sandbox, args, io);
  } catch (error) {
    return unexpectedFailure(io, error);
  }
}

async function runTool(sandbox: Sandbox, args: RunArgs, io: CliIo): Promise<number> {
  const file = path.resolve(io.cwd, args.file);
  let bundle;
  try {
    bundle = await bundleToolModule(file, path.dirname(file));
  } catch (error) {
    return fail(io, 'SyntaxError', error instanceof CallError ? error.message : String(error));
  }
  const described = await sandbox.describe(bundle, identity(path.basename(file)));
  if (!described.ok) return fail(io, described.error.name, described.error.message);
  let grant: WireGrant;
  try {
    grant = resolveGrant(described.declarations.permissions ?? {}, flagsAsPermissions(args), undefined, { cwd: io.cwd }) as unknown as WireGrant;
  } catch (error) {
    if (error instanceof InvalidGrantError) return fail(io, 'TypeError', error.message);
    throw error;
  }
  const outcome = await sandbox.runTool({
    identity: identity(typeof described.declarations.name === 'string' ? described.declarations.name : path.basename(file)),
    bundle, params: args.params, grant, cwd: io.cwd, secrets: processSecrets(io.env),
    onUpdate: (text) => { io.stderr(`update: ${text}\n`); },
    onLog: printLog(io),
  });
  if (!outcome.ok) return fail(io, outcome.error.name, outcome.error.message);
  if (outcome.isError) return fail(io, 'ToolError', outcome.content);
  io.stdout(withNewline(outcome.content));
  return 0;
}

/** `paddock exec [flags] (<file> | --eval '<code>') [--language ts|js]`: a code_exec snippet (an async function body). */
export async function execCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const rest: string[] = [];
  let code: string | undefined;
  let language: 'ts' | 'js' | undefined;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    if (arg === '--eval' || arg === '-e') code = argv[++index];
    else if (arg === '--language') {
      const value = argv[++index];
      if (value !== 'ts' && value !== 'js') throw new UsageError('--language must be ts or js');
      language = value;
    } else rest.push(arg);
  }
  let args: RunArgs;
  if (code === undefined) {
    args = parseRunArgs(rest);
    code = await readFile(path.resolve(io.cwd, args.file), 'utf8');
    language ??= args.file.endsWith('.js') ? 'js' : 'ts';
  } else {
    args = parseRunArgs(['<eval>', ...rest]);
  }
  const snippet = code;
  return withSandbox(io, async (sandbox) => {
    let grant: WireGrant;
    try {
      grant = resolveGrant(flagsAsPermissions(args), flagsAsPermissions(args), undefined, { cwd: io.cwd }) as unknown as WireGrant;
    } catch (error) {
      if (error instanceof InvalidGrantError) return fail(io, 'TypeError', error.message);
      throw error;
    }
    const outcome = await sandbox.exec({ identity: identity('code_exec'), code: snippet, language: language ?? 'ts', grant, cwd: io.cwd, secrets: processSecrets(io.env), onLog: printLog(io) });
    if (!outcome.ok) return fail(io, outcome.error.name, outcome.error.message);
    if (outcome.result !== null) io.stdout(withNewline(typeof outcome.result === 'string' ? outcome.result : JSON.stringify(outcome.result, null, 2)));
    return 0;
  });
}

async function withSandbox(io: CliIo, run: (sandbox: Sandbox) => Promise<number>): Promise<number> {
  const sandbox = await startSandbox({ limits: DEFAULT_LIMITS, audit: { record: () => undefined }, workers: 1, warmIsolates: 1, callsPerWorker: 1 });
  try {
    return await run(sandbox);
  } catch (error) {
    return unexpectedFailure(io, error);
  } finally {
    await sandbox.close();
  }
}

/** A usage error goes up to the CLI's usage handling; anything else is this call's failure. */
function unexpectedFailure(io: CliIo, error: unknown): number {
  if (error instanceof UsageError) throw error;
  return fail(io, 'Error', error instanceof Error ? error.message : String(error));
}

function flagsAsPermissions(args: RunArgs): Record<string, true | string[]> {
  const permissions: Record<string, true | string[]> = {};
  for (const [name, value] of Object.entries(args.allow)) permissions[name] = value;
  return permissions;
}

/** As with `deno run --allow-env`, values come from this process's environment. */
function processSecrets(env: CliIo['env']): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) secrets[name] = value;
  return secrets;
}

/** Console lines go out as the guest writes them, interleaved with updates as under Deno. */
function printLog(io: CliIo): (line: LogLine) => void {
  return (line) => { (line.level === 'error' || line.level === 'warn' ? io.stderr : io.stdout)(`${line.text}\n`); };
}

function fail(io: CliIo, name: string, message: string): number {
  io.stderr(`error: ${name}: ${message}\n`);
  return 1;
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}
