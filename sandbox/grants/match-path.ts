/**
 * Path containment over real, absolute paths (resolve them first: see real-path.ts). A granted
 * path covers itself and everything below it, by whole components: `/data` covers `/data/x`,
 * never `/database`.
 */

export function pathCovers(granted: string, real: string): boolean {
  if (real === granted) return true;
  const prefix = granted.endsWith('/') ? granted : `${granted}/`;
  return real.startsWith(prefix);
}

/** What both lists allow: where one path contains the other, the deeper path remains. */
export function intersectPaths(a: readonly string[], b: readonly string[]): string[] {
  const result: string[] = [];
  for (const left of a) {
    for (const right of b) {
      if (pathCovers(left, right)) result.push(right);
      else if (pathCovers(right, left)) result.push(left);
    }
  }
  return minimizePaths(result);
}

/** Drops duplicates and paths already covered by another entry; keeps first-seen order. */
export function minimizePaths(paths: readonly string[]): string[] {
  const unique = [...new Set(paths)];
  return unique.filter((path) => !unique.some((other) => other !== path && pathCovers(other, path)));
}
