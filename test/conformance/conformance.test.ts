/**
 * Pins SPEC §2's portability promise against real Deno 2: every module of the corpus
 * (test/fixtures/conformance/modules) prints the same stdout and stderr and exits with the same
 * code under `deno run` (through scripts/deno-run.ts's runner) as under `paddock run` (through its
 * own code path, runToolOn, on one sandbox shared by the suite), with the same params, flags and
 * environment. Known differences are not skipped: both outputs are asserted exactly, and must differ.
 */
import { spawn } from 'node:child_process';
import { readFile, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../sandbox/limits.ts';
import { startSandbox } from '../../sandbox/sandbox.ts';
import type { Sandbox } from '../../sandbox/sandbox.ts';
import { CASES } from './cases.ts';
import { MODULES, limiter, makeWorkspace, runDenoSide, runPaddockSide } from './harness.ts';
import type { ExpectedOutput, RunOutput } from './harness.ts';
import { startLoopbackServers } from './servers.ts';
import type { LoopbackServers } from './servers.ts';

interface Outcome {
  deno: RunOutput;
  paddock: RunOutput;
}

let sandbox: Sandbox | undefined;
let servers: LoopbackServers | undefined;
const outcomes = new Map<string, Promise<Outcome>>();

beforeAll(async () => {
  [sandbox, servers] = await Promise.all([
    startSandbox({ limits: DEFAULT_LIMITS, audit: { record: () => undefined }, workers: 1, warmIsolates: 2 }),
    startLoopbackServers(),
  ]);
  const places = { port: servers.port, port2: servers.port2 };
  const shared = sandbox;
  // Two cores: at most two Deno processes and two sandbox calls at a time, started in case order.
  const denoSlot = limiter(2);
  const paddockSlot = limiter(2);
  for (const testCase of CASES) {
    const outcome = Promise.all([
      denoSlot(() => runDenoSide(testCase, places)),
      paddockSlot(() => runPaddockSide(shared, testCase, places)),
    ]).then(([deno, paddock]) => ({ deno, paddock }));
    outcome.catch(() => undefined); // reported by the case's own test
    outcomes.set(testCase.name, outcome);
  }
});

afterAll(async () => {
  await Promise.allSettled(outcomes.values());
  await sandbox?.close();
  await servers?.close();
});

const matcher = (expected: ExpectedOutput) => ({
  stdout: typeof expected.stdout === 'string' ? expected.stdout : expect.stringMatching(expected.stdout),
  stderr: typeof expected.stderr === 'string' ? expected.stderr : expect.stringMatching(expected.stderr),
  code: expected.code,
});

describe('Deno conformance corpus', () => {
  it('has at least 40 modules, each used by a case and each opening with a one-line comment', async () => {
    const files = (await readdir(MODULES)).filter((file) => file.endsWith('.ts'));
    expect(files.length).toBeGreaterThanOrEqual(40);
    const used = new Set(CASES.map((testCase) => testCase.module));
    expect(files.filter((file) => !used.has(file))).toEqual([]);
    expect([...used].filter((file) => !files.includes(file))).toEqual([]);
    for (const file of files) {
      const firstLine = (await readFile(path.join(MODULES, file), 'utf8')).split('\n')[0] ?? '';
      expect(firstLine, file).toMatch(/^\/\/ Checks .+\.$/);
    }
    expect(new Set(CASES.map((testCase) => testCase.name)).size).toBe(CASES.length);
  });

  for (const testCase of CASES) {
    const difference = testCase.expectedDifference;
    if (difference === undefined) {
      it(testCase.name, async () => {
        const { deno, paddock } = await outcomes.get(testCase.name)!;
        expect(paddock).toEqual(deno);
      });
    } else {
      it(`${testCase.name} [known difference]`, async () => {
        const { deno, paddock } = await outcomes.get(testCase.name)!;
        expect({ deno, paddock }).toEqual({ deno: matcher(difference.deno), paddock: matcher(difference.paddock) });
        expect(paddock).not.toEqual(deno);
      });
    }
  }
});

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs `node <script> ...args` to completion in `cwd` with only `env`, and collects its output. */
function runNode(script: string, args: readonly string[], cwd: string, env: Record<string, string>): Promise<RunOutput> {
  const child = spawn(process.execPath, [path.join(ROOT, script), ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => { resolve({ stdout, stderr, code: code ?? -1 }); });
  });
}

describe('the two CLIs themselves', () => {
  it('`paddock run` and `npm run deno-run` print the same bytes for the same module and flags', async () => {
    const dir = await makeWorkspace();
    try {
      const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', NO_COLOR: '1', CONF_TOKEN: 'abc' };
      const cwd = path.join(dir, 'work');
      const runs = [
        [path.join(MODULES, 'update-progress.ts'), '--params', '{"steps":2}'],
        [path.join(MODULES, 'env-vars.ts'), '--params', '{"names":["CONF_TOKEN","OTHER"]}', '--allow-env=CONF_TOKEN', '--allow-read=.'],
      ];
      const outputs = await Promise.all(runs.flatMap((args) => [
        runNode('runtime/cli/main.ts', ['run', ...args], cwd, env),
        runNode('scripts/deno-run.ts', args, cwd, env),
      ]));
      expect(outputs).toEqual([
        { stdout: 'stdout log between updates\ntotal=3\n', stderr: 'update: step 1 of 2, total 1\nupdate: step 2 of 2, total 3\nupdate: multi\nline update\nupdate: last update\n', code: 0 },
        { stdout: 'stdout log between updates\ntotal=3\n', stderr: 'update: step 1 of 2, total 1\nupdate: step 2 of 2, total 3\nupdate: multi\nline update\nupdate: last update\n', code: 0 },
        { stdout: '', stderr: 'error: NotCapable: Requires env access to "OTHER", run again with the --allow-env flag\n', code: 1 },
        { stdout: '', stderr: 'error: NotCapable: Requires env access to "OTHER", run again with the --allow-env flag\n', code: 1 },
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
