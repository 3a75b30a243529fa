/**
 * Pins that the reload benchmark (scripts/bench-reload.ts) runs end to end in its quick mode, as
 * `npm run bench:reload` runs it: every path measured every save, the table is printed and the
 * JSON written. No timing is asserted: the machine is shared; the figures belong in the report.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseOptions } from '../../scripts/bench-reload.ts';
import type { ReloadBenchResult } from '../../scripts/bench-reload.ts';
import { tempDir } from '../helpers/temp.ts';
import { runNodeScript } from '../helpers/run-script.ts';

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/bench-reload.ts');

const runBench = (args: readonly string[]) => runNodeScript(SCRIPT, args);

describe('bench-reload', () => {
  it('measures every save of every path in quick mode, prints the table and writes the JSON', async () => {
    const json = path.join(await tempDir(), 'reload.json');
    const { code, stdout, stderr } = await runBench(['--quick', '--json', json]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    for (const label of ['watcher: swapped', 'watcher: answering', 'write_tool: answering']) expect(stdout).toMatch(new RegExp(`${label} +5 +\\d+\\.\\d`));
    expect(stdout).toMatch(/Target p50 <= 100 ms \(file saved -> new version answering\): (met|MISSED) \(median \d+\.\d ms, p90 \d+\.\d ms/);

    const result = JSON.parse(await readFile(json, 'utf8')) as ReloadBenchResult;
    expect(result.options).toMatchObject({ quick: true, iterations: 5, workers: 1 });
    expect(result.timeouts).toBe(0);
    for (const summary of [result.watcherSwapped, result.watcherAnswering, result.writeToolAnswering]) {
      expect(summary.n).toBe(5);
      expect(summary.median).toBeGreaterThan(0);
    }
    // Saved -> answering includes saved -> swapped.
    expect(result.watcherAnswering.median).toBeGreaterThanOrEqual(result.watcherSwapped.min);
  }, 60_000);

  it('reads its options', () => {
    expect(parseOptions([])).toMatchObject({ iterations: 60, warmup: 3, workers: 1, quick: false, json: undefined });
    expect(parseOptions(['--quick', '--json', 'out.json'])).toMatchObject({ iterations: 5, warmup: 1, json: 'out.json', quick: true });
    expect(parseOptions(['--iterations', '200', '--workers', '2'])).toMatchObject({ iterations: 200, workers: 2 });
    expect(() => parseOptions(['--iterations', '0'])).toThrow(/--iterations must be an integer >= 1/);
    expect(() => parseOptions(['--bogus'])).toThrow();
  });
});
