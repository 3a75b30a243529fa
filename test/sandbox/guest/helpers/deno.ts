/**
 * Runs a snippet under the real Deno 2 that the project pins (scripts/deno-binary.ts), so guest
 * behaviour can be compared with Deno's own where the semantics are subtle.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { denoBinary } from '../../../../scripts/deno-binary.ts';

const DENO = denoBinary();

/** Runs `source` as a module with no permissions and returns its stdout. */
export async function runDeno(source: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'paddock-deno-'));
  const file = path.join(dir, 'main.js'); // .js: Deno would transpile .ts and reformat function sources
  try {
    await writeFile(file, source);
    return await new Promise<string>((resolve, reject) => {
      execFile(DENO, ['run', '--quiet', '--no-prompt', '--no-config', file], { env: { ...process.env, NO_COLOR: '1' }, timeout: 20_000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`deno failed: ${error.message}\n${stderr}`));
        else resolve(stdout);
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Evaluates the body of an async function under Deno and returns its JSON-parsed result. */
export async function denoEvaluate(body: string): Promise<unknown> {
  const stdout = await runDeno(`const __result = await (async () => {\n${body}\n})();\nconsole.log(JSON.stringify(__result));\n`);
  return JSON.parse(stdout) as unknown;
}
