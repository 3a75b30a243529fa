import path from 'node:path';
import { bundleToolModule } from '../../sandbox/bundler/tool-bundle.ts';
import { CallError } from '../../sandbox/errors.ts';
import { DEFAULT_LIMITS } from '../../sandbox/limits.ts';
import { startSandbox } from '../../sandbox/sandbox.ts';
import { validateDeclarations } from '../registry/validate-declarations.ts';
import type { CliIo } from './run-command.ts';
import { UsageError } from './run-args.ts';

/**
 * `paddock check <file>`: compiles a tool module, evaluates its top level in the sandbox (no grant)
 * and checks its four definitions, printing every problem. Exit 0 when the tool would load.
 */
export async function checkCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const files = argv.filter((arg) => !arg.startsWith('-'));
  const unknown = argv.find((arg) => arg.startsWith('-'));
  if (unknown !== undefined) throw new UsageError(`unknown option "${unknown}"`);
  if (files.length !== 1 || files[0] === undefined) throw new UsageError('expected exactly one tool file');
  const file = path.resolve(io.cwd, files[0]);
  let bundle;
  try {
    bundle = await bundleToolModule(file, path.dirname(file));
  } catch (error) {
    io.stderr(`error: ${files[0]}: does not compile:\n${error instanceof CallError ? error.message : String(error)}\n`);
    return 1;
  }
  const sandbox = await startSandbox({ limits: DEFAULT_LIMITS, audit: { record: () => undefined }, workers: 1, warmIsolates: 1, callsPerWorker: 1 });
  try {
    const described = await sandbox.describe(bundle, { callId: 'check', tool: path.basename(file), caller: 'cli' });
    if (!described.ok) {
      io.stderr(`error: ${files[0]}: its top level failed: ${described.error.name}: ${described.error.message}\n`);
      return 1;
    }
    const checked = validateDeclarations(described.declarations, io.cwd);
    if (!checked.ok) {
      io.stderr(`error: ${files[0]}:\n${checked.problems.map((problem) => `  ${problem}`).join('\n')}\n`);
      return 1;
    }
    const { name, permissions } = checked.declarations;
    io.stdout(`ok: ${name} (${files[0]}, ${bundle.code.length} bytes bundled) permissions: ${JSON.stringify(permissions)}\n`);
    return 0;
  } finally {
    await sandbox.close();
  }
}
