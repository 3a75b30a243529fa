/**
 * Runs a Paddock tool module under real Deno, with the same params and permission flags as
 * `paddock run`, and prints the same format: the result's content on stdout (exit 0), or
 * `error: <ErrorName>: <message>` on stderr (exit 1). Authors use it to check both sides:
 *
 *   npm run deno-run -- tools/weather.ts --params '{"city":"Oslo"}' --allow-net=api.open-meteo.com
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError, denoFlags, parseRunArgs } from '../runtime/cli/run-args.ts';
import { denoBinary } from './deno-binary.ts';

const DENO = denoBinary();

/**
 * The harness Deno runs (the benchmark runs it too). The tool is imported through a literal
 * specifier, so Deno needs no read grant for it.
 */
export function denoHarness(toolUrl: string, params: unknown): string {
  return `
const write = (stream, text) => stream.writeSync(new TextEncoder().encode(text));
const fail = (name, message) => { write(Deno.stderr, "error: " + name + ": " + message + "\\n"); Deno.exit(1); };
// A thrown value reads as Paddock reports it: its name (else Error), its message (else the value as a string).
const errorName = (error) => (typeof error?.name === "string" && error.name !== "" ? error.name : "Error");
const errorMessage = (error) => (error?.message ?? String(error));
let tool;
try {
  tool = await import(${JSON.stringify(toolUrl)});
} catch (error) {
  fail(errorName(error), errorMessage(error));
}
if (typeof tool.default !== "function") fail("TypeError", "The module has no default export function (execute).");
const controller = new AbortController();
const ctx = {
  signal: controller.signal,
  update: (text) => { write(Deno.stderr, "update: " + String(text) + "\\n"); },
  callId: "cli",
  sessionId: null,
};
let result;
try {
  result = await tool.default(${JSON.stringify(params)}, ctx);
} catch (error) {
  fail(errorName(error), errorMessage(error));
}
// The result is checked as Paddock's guest checks it (sandbox/guest/invoke.ts), with the same messages.
if (typeof result !== "string") {
  if (typeof result !== "object" || result === null || Array.isArray(result)) {
    const what = result === null ? "null" : Array.isArray(result) ? "an array" : typeof result;
    fail("TypeError", "A tool must return a string or { content, isError?, metadata?, terminate? }; it returned " + what + ".");
  }
  if (typeof result.content !== "string") {
    fail("TypeError", "The tool result's content must be a string; it was " + (result.content === null ? "null" : typeof result.content) + ".");
  }
  const metadata = result.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata !== "object" || Array.isArray(metadata)) fail("TypeError", "The tool result's metadata must be an object.");
    try {
      JSON.stringify(metadata);
    } catch (error) {
      fail(errorName(error), errorMessage(error));
    }
  }
  if (result.isError === true) fail("ToolError", result.content);
  result = result.content;
}
write(Deno.stdout, result.endsWith("\\n") ? result : result + "\\n");
`;
}

export async function denoRun(argv: readonly string[], cwd = process.cwd()): Promise<number> {
  return (await runUnderDeno(argv, { cwd, env: process.env, output: 'inherit' })).code;
}

export interface DenoRunOptions {
  cwd: string;
  /** Deno's environment (its `--allow-env` values); DENO_NO_UPDATE_CHECK and NO_COLOR are added. */
  env: Readonly<Record<string, string | undefined>>;
  /** `inherit` prints to this process's streams; `capture` collects the output into the result. */
  output: 'inherit' | 'capture';
}

export interface DenoRunResult {
  code: number;
  /** Captured output (empty strings with `output: 'inherit'`). */
  stdout: string;
  stderr: string;
}

/** `denoRun` for callers that choose the environment and may capture the output (the conformance suite). */
export async function runUnderDeno(argv: readonly string[], options: DenoRunOptions): Promise<DenoRunResult> {
  const args = parseRunArgs(argv);
  const folder = await mkdtemp(path.join(tmpdir(), 'paddock-deno-'));
  try {
    const entry = path.join(folder, 'main.js');
    await writeFile(entry, denoHarness(pathToFileURL(path.resolve(options.cwd, args.file)).href, args.params));
    const capture = options.output === 'capture';
    const child = spawn(DENO, ['run', '--no-prompt', '--quiet', ...denoFlags(args.allow), entry], {
      cwd: options.cwd,
      stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env: { ...options.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    const code = await new Promise<number>((resolve) => {
      child.once('close', (exitCode) => { resolve(exitCode ?? 1); });
      child.once('error', (error) => {
        const message = `error: cannot start deno (${error.message}); run npm ci first\n`;
        if (capture) stderr.push(Buffer.from(message));
        else process.stderr.write(message);
        resolve(1);
      });
    });
    return { code, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  denoRun(process.argv.slice(2)).then((code) => { process.exit(code); }, (error: unknown) => {
    process.stderr.write(error instanceof UsageError ? `error: ${error.message}\n` : `error: ${String(error)}\n`);
    process.exit(2);
  });
}
