/**
 * What the benchmark scripts share: percentile summaries, integer options, the summary table rows
 * of the reload and agent-loop reports, and the command-line entry (report on stdout, optional
 * JSON file, one error line and exit code 1 on failure).
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { ParseArgsOptionsConfig } from 'node:util';

export interface Summary {
  n: number;
  median: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentiles (no interpolation: every reported value was observed). */
export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { n: 0, median: Number.NaN, p90: Number.NaN, p99: Number.NaN, mean: Number.NaN, min: Number.NaN, max: Number.NaN };
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
  return {
    n: sorted.length,
    median: rank(0.5),
    p90: rank(0.9),
    p99: rank(0.99),
    mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

const COMMON_OPTIONS = {
  quick: { type: 'boolean', default: false },
  json: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/**
 * A benchmark's flags plus the ones every benchmark takes (`--quick`, `--json <file>`, `--help`,
 * which prints `usage` and exits); no positionals, unknown flags refused.
 */
export function parseBenchArgs<const Own extends ParseArgsOptionsConfig>(argv: readonly string[], own: Own, usage: string) {
  const options = { ...own, ...COMMON_OPTIONS };
  const { values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  if ((values as { help?: boolean }).help === true) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return values;
}

/** `raw` (a `--name` value) as an integer of at least `min`, or `fallback` when absent. */
export function integerOption(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer >= ${min} (got "${raw}")`);
  return value;
}

/** Rows of n, median, p90, p99, min and max (ms) under a label column. */
export function summaryTable(widths: { label: number; n: number }, decimals: number): {
  header: (title: string) => string;
  row: (label: string, summary: Summary) => string;
} {
  const fmt = (value: number): string => (Number.isNaN(value) ? '-' : value.toFixed(decimals));
  return {
    header: (title) => `${title.padEnd(widths.label)}${'n'.padStart(widths.n)}${['median', 'p90', 'p99', 'min', 'max'].map((name) => name.padStart(9)).join('')}   (ms)`,
    row: (label, summary) => `${label.padEnd(widths.label)}${String(summary.n).padStart(widths.n)}`
      + [summary.median, summary.p90, summary.p99, summary.min, summary.max].map((value) => fmt(value).padStart(9)).join(''),
  };
}

/** Runs a benchmark from the command line: parse, run, print the report, write the JSON if asked. */
export async function benchMain<Options extends { json?: string | undefined }, Result>(
  parse: (argv: readonly string[]) => Options,
  run: (options: Options) => Promise<Result>,
  report: (result: Result) => string,
): Promise<void> {
  try {
    const options = parse(process.argv.slice(2));
    const result = await run(options);
    process.stdout.write(report(result));
    if (options.json !== undefined) await writeFile(options.json, `${JSON.stringify(result, null, 2)}\n`);
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
