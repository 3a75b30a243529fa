/**
 * Runs one conformance case on both sides: under real Deno through scripts/deno-run.ts's runner,
 * and under Paddock through `paddock run`'s own code path (runToolOn) on a sandbox shared by the
 * whole suite. Each side gets a fresh workspace of the same layout, so outputs are compared after
 * the workspace path is replaced by `{dir}`.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runToolOn } from '../../runtime/cli/run-command.ts';
import { parseRunArgs } from '../../runtime/cli/run-args.ts';
import type { Sandbox } from '../../sandbox/sandbox.ts';
import { runUnderDeno } from '../../scripts/deno-run.ts';

export const MODULES = path.resolve(import.meta.dirname, '../fixtures/conformance/modules');

/** What `paddock run` and the Deno runner print, and how they exit. */
export interface RunOutput {
  stdout: string;
  stderr: string;
  code: number;
}

/** An expected output; a RegExp stands for text that holds run-specific details (stack frames). */
export interface ExpectedOutput {
  stdout: string | RegExp;
  stderr: string | RegExp;
  code: number;
}

/** A known difference from Deno: both sides are asserted exactly, and must differ. */
export interface ExpectedDifference {
  reason: string;
  deno: ExpectedOutput;
  paddock: ExpectedOutput;
}

export interface ConformanceCase {
  /** The test title; unique. */
  name: string;
  /** A file under test/fixtures/conformance/modules. */
  module: string;
  /** `--params`; strings may hold the placeholders of `fill`. */
  params?: unknown;
  /** Deno's flags, as both `deno run` and `paddock run` take them; placeholders allowed. */
  flags?: readonly string[];
  /** Extra environment for both sides (what `--allow-env` can read). */
  env?: Readonly<Record<string, string>>;
  expectedDifference?: ExpectedDifference;
}

/** Values known once the suite is up: the two loopback servers' ports. */
export interface Placeholders {
  port: number;
  port2: number;
}

/**
 * The workspace every run gets, the same on both sides:
 *
 *   {dir}/work/                 the working directory
 *     notes.txt, sub/deep.txt, data.bin
 *     link-in.txt  -> work/notes.txt        (a symlink that stays inside)
 *     link-out.txt -> outside/secret.txt    (a symlink that points out)
 *     link-dir-out -> outside               (a directory symlink that points out)
 *   {dir}/outside/secret.txt
 */
export async function makeWorkspace(): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'paddock-conformance-')));
  const work = path.join(dir, 'work');
  await mkdir(path.join(work, 'sub'), { recursive: true });
  await mkdir(path.join(dir, 'outside'));
  await writeFile(path.join(work, 'notes.txt'), 'notes inside the grant\n');
  await writeFile(path.join(work, 'sub', 'deep.txt'), 'deep file');
  await writeFile(path.join(work, 'data.bin'), Uint8Array.from([0, 1, 2, 250, 255]));
  await writeFile(path.join(dir, 'outside', 'secret.txt'), 'secret outside the grant');
  await symlink(path.join(work, 'notes.txt'), path.join(work, 'link-in.txt'));
  await symlink(path.join(dir, 'outside', 'secret.txt'), path.join(work, 'link-out.txt'));
  await symlink(path.join(dir, 'outside'), path.join(work, 'link-dir-out'));
  return dir;
}

/** Replaces `{dir}`, `{port}` and `{port2}` in every string of a JSON value. */
export function fill<T>(value: T, dir: string, places: Placeholders): T {
  const text = (input: string) => input.replaceAll('{dir}', dir).replaceAll('{port2}', String(places.port2)).replaceAll('{port}', String(places.port));
  const walk = (input: unknown): unknown => {
    if (typeof input === 'string') return text(input);
    if (Array.isArray(input)) return input.map(walk);
    if (typeof input === 'object' && input !== null) return Object.fromEntries(Object.entries(input).map(([key, inner]) => [key, walk(inner)]));
    return input;
  };
  return walk(value) as T;
}

const MODULES_URL = pathToFileURL(MODULES).href;

/**
 * Makes outputs comparable and expectations portable: the run's workspace becomes `{dir}`, the
 * corpus folder `{modules}`, the Deno runner's temporary entry `{harness}`, and the servers' ports
 * (after a colon) `:{port}` and `:{port2}`.
 */
function normalize(output: RunOutput, dir: string, places: Placeholders): RunOutput {
  const clean = (text: string) => text
    .replaceAll(MODULES_URL, '{modules}').replaceAll(MODULES, '{modules}').replaceAll(dir, '{dir}')
    .replace(/file:\/\/\/\S*?paddock-deno-[^/]+\/main\.js/g, '{harness}')
    .replace(new RegExp(`:${places.port2}(?!\\d)`, 'g'), ':{port2}').replace(new RegExp(`:${places.port}(?!\\d)`, 'g'), ':{port}');
  return { stdout: clean(output.stdout), stderr: clean(output.stderr), code: output.code };
}

/** The environment both sides see: a fixed, small one plus the case's variables. */
function environment(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const base: Record<string, string> = { NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' };
  for (const name of ['PATH', 'HOME', 'DENO_DIR']) {
    const value = process.env[name];
    if (value !== undefined) base[name] = value;
  }
  return { ...base, ...extra };
}

function argv(testCase: ConformanceCase, dir: string, places: Placeholders): string[] {
  return [
    path.join(MODULES, testCase.module),
    '--params', JSON.stringify(fill(testCase.params ?? {}, dir, places)),
    ...fill(testCase.flags ?? [], dir, places),
  ];
}

async function inWorkspace(places: Placeholders, run: (dir: string) => Promise<RunOutput>): Promise<RunOutput> {
  const dir = await makeWorkspace();
  try {
    return normalize(await run(dir), dir, places);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function runDenoSide(testCase: ConformanceCase, places: Placeholders): Promise<RunOutput> {
  return inWorkspace(places, async (dir) => runUnderDeno(argv(testCase, dir, places), { cwd: path.join(dir, 'work'), env: environment(testCase.env), output: 'capture' }));
}

export function runPaddockSide(sandbox: Sandbox, testCase: ConformanceCase, places: Placeholders): Promise<RunOutput> {
  return inWorkspace(places, async (dir) => {
    let stdout = '';
    let stderr = '';
    const io = {
      stdout: (text: string) => { stdout += text; },
      stderr: (text: string) => { stderr += text; },
      env: environment(testCase.env),
      cwd: path.join(dir, 'work'),
    };
    const code = await runToolOn(sandbox, parseRunArgs(argv(testCase, dir, places)), io);
    return { stdout, stderr, code };
  });
}

/** Runs tasks with at most `limit` at once, in the order they were queued. */
export function limiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active < limit) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve)); // a finishing task hands its slot over
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next === undefined) active--;
      else next();
    }
  };
}
