/**
 * `--allow-env` entries: a variable name, or a prefix pattern ending in `*` (`AWS_*` covers every
 * name starting with `AWS_`; a lone `*` covers every name but is still a list, so
 * `Deno.env.toObject()` stays refused, as in Deno). Names compare case-sensitively, as on Linux.
 */

/** Deno's complaint for an entry it would refuse at the command line, or undefined when valid. */
export function envEntryError(entry: string): string | undefined {
  if (entry === '') return 'Empty env not allowed';
  if (entry.includes('=') || entry.includes('\0')) return `invalid env var name: '${entry}'`;
  return undefined;
}

/** True when the granted entry lets the program read the variable `name`. */
export function envCovers(entry: string, name: string): boolean {
  return entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : name === entry;
}

/** True when everything `inner` allows, `outer` allows too. */
export function envIncludes(outer: string, inner: string): boolean {
  if (!outer.endsWith('*')) return outer === inner;
  return inner.startsWith(outer.slice(0, -1));
}

/** What both lists allow: a name within a pattern stays; of two nested patterns the narrower stays. */
export function intersectEnv(a: readonly string[], b: readonly string[]): string[] {
  const result: string[] = [];
  for (const left of a) {
    for (const right of b) {
      if (envIncludes(left, right)) result.push(right);
      else if (envIncludes(right, left)) result.push(left);
    }
  }
  return minimizeEnv(result);
}

export function minimizeEnv(entries: readonly string[]): string[] {
  const unique = [...new Set(entries)];
  return unique.filter((entry) => !unique.some((other) => other !== entry && envIncludes(other, entry)));
}
