/** The flags `paddock run` shares with `deno run`, parsed the way Deno reads them. */
export type FlagGrant = true | string[];

export interface RunArgs {
  file: string;
  params: unknown;
  allow: { net?: FlagGrant; read?: FlagGrant; write?: FlagGrant; env?: FlagGrant };
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

const PERMISSIONS = ['net', 'read', 'write', 'env'] as const;

/**
 * `<tool-file> [--params '<json>'] [--allow-net[=a,b]] [--allow-read[=...]] [--allow-write[=...]] [--allow-env[=...]]`.
 * A flag without a value grants everything of its kind, as in Deno; repeated flags add up.
 */
export function parseRunArgs(args: readonly string[]): RunArgs {
  let file: string | undefined;
  let paramsText: string | undefined;
  const allow: RunArgs['allow'] = {};
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? '';
    if (arg === '--params' || arg.startsWith('--params=')) {
      paramsText = arg === '--params' ? args[++index] : arg.slice('--params='.length);
      if (paramsText === undefined) throw new UsageError('--params needs a JSON value');
      continue;
    }
    const flag = /^--allow-(net|read|write|env)(?:=(.*))?$/.exec(arg);
    if (flag !== null) {
      const name = flag[1] as (typeof PERMISSIONS)[number];
      const value = flag[2];
      const previous = allow[name];
      if (value === undefined || previous === true) allow[name] = true;
      else {
        const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
        if (entries.length === 0) throw new UsageError(`--allow-${name}= needs at least one value`);
        allow[name] = [...(previous ?? []), ...entries];
      }
      continue;
    }
    if (arg.startsWith('-')) throw new UsageError(`unknown option "${arg}"`);
    if (file !== undefined) throw new UsageError(`unexpected argument "${arg}" (the tool file is "${file}")`);
    file = arg;
  }
  if (file === undefined) throw new UsageError('missing the tool file');
  let params: unknown = {};
  if (paramsText !== undefined) {
    try {
      params = JSON.parse(paramsText);
    } catch (error) {
      throw new UsageError(`--params is not valid JSON: ${(error as Error).message}`);
    }
  }
  return { file, params, allow };
}

/** The same flags, rendered back for `deno run`. */
export function denoFlags(allow: RunArgs['allow']): string[] {
  return PERMISSIONS.flatMap((name) => {
    const grant = allow[name];
    if (grant === undefined) return [];
    return [grant === true ? `--allow-${name}` : `--allow-${name}=${grant.join(',')}`];
  });
}
