import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import type { OnFinished } from './temp.ts';

const CLI = path.resolve(import.meta.dirname, '../../runtime/cli/main.ts');

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface PaddockProcess {
  readonly child: ChildProcess;
  /** Resolves when the process has exited and its output streams have ended. */
  readonly exited: Promise<Exit>;
  /** Resolves with the first JSON log record on stdout whose `msg` is `msg` (now or later). */
  logRecord(msg: string): Promise<Record<string, unknown>>;
}

export interface SpawnOptions {
  readonly cwd: string;
  readonly env?: Record<string, string>;
  /** Where to register the kill at the end of the test (the test context's, for concurrent tests). */
  readonly onFinished?: OnFinished;
}

/**
 * Runs `node runtime/cli/main.ts ...args` on this Node (24 under vitest) in `cwd`, with only PATH
 * and `env` in its environment, and kills it if the test ends first.
 */
export function spawnPaddock(args: readonly string[], options: SpawnOptions): PaddockProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env['PATH'] ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiting: { msg: string; resolve: (record: Record<string, unknown>) => void }[] = [];
  const records: Record<string, unknown>[] = [];
  let partial = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk;
    partial += chunk;
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const record = JSON.parse(line) as Record<string, unknown>;
      records.push(record);
      for (const waiter of waiting.filter((candidate) => candidate.msg === record['msg'])) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve(record);
      }
    }
  });
  child.stderr.on('data', (chunk: string) => { stderr += chunk; });
  const exited = new Promise<Exit>((resolve) => {
    child.once('close', (code, signal) => { resolve({ code, signal, stdout, stderr }); });
  });
  (options.onFinished ?? onTestFinished)(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    exited,
    logRecord: (msg) => {
      const found = records.find((record) => record['msg'] === msg);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        waiting.push({ msg, resolve });
        void exited.then((exit) => { reject(new Error(`paddock exited (${String(exit.code)}) before logging "${msg}"; stderr: ${exit.stderr}`)); });
      });
    },
  };
}

/** Runs the CLI to completion. */
export function runPaddock(args: readonly string[], options: SpawnOptions): Promise<Exit> {
  return spawnPaddock(args, options).exited;
}
