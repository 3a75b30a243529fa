/**
 * Pins that the sandbox benchmark (scripts/bench-sandbox.ts) runs end to end in its quick mode:
 * every section measured something, the table is printed and the JSON is written. No timing is
 * asserted: the machine is shared, and the numbers belong in the report, not in a test.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { summarize } from '../../scripts/bench-common.ts';
import { parseOptions } from '../../scripts/bench-sandbox.ts';
import { tempDir } from '../helpers/temp.ts';
import { runNodeScript } from '../helpers/run-script.ts';

interface Stat { n: number; median: number }
interface BenchJson {
  machine: { cores: number };
  options: { quick: boolean };
  inWorker: { phases: Record<string, Stat | undefined> };
  codeCache: { script: string; compileHit: Stat }[];
  endToEnd: { tool: string; runner: string; concurrency: number | 'paced'; calls: number; latency: Stat; throughput: number | null }[];
  ipcRoundTrip: Stat;
  pacedIpcRoundTrip: Stat;
  pacedIsolateHop: Stat;
  inFlight: { calls: number; ok: number; heldAtOnce: number; peak: { total: number; coordinator: number; workers: number; workerCount: number }; plateauPssMiB: number };
  crashRecovery: { kills: number; servingMs: Stat; exitSeenMs: Stat };
  verdict: { text: string[] };
}

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/bench-sandbox.ts');

const runBench = (args: readonly string[]) => runNodeScript(SCRIPT, args);

describe('bench-sandbox', () => {
  it('runs every section in quick mode, prints the table and writes the JSON', async () => {
    const dir = await tempDir();
    const json = path.join(dir, 'bench.json');
    const { code, stdout, stderr } = await runBench(['--quick', '--json', json]);
    expect(stderr).not.toMatch(/^error:/m);
    expect(code).toBe(0);
    for (const heading of ['1. In-worker isolate phases', 'where preparation goes', 'V8 code cache', '2-3. End to end', 'where a trivial (echo) call\'s time goes',
      '4. 40 calls in flight at once', '5. A worker crash', 'Verdict']) {
      expect(stdout).toContain(heading);
    }
    expect(stdout).toMatch(/\d+ cores .*\n.*node v24\.\d+\.\d+ .*deno 2\.\d+\.\d+/);

    const results = JSON.parse(await readFile(json, 'utf8')) as BenchJson;
    expect(results.machine.cores).toBeGreaterThan(0);
    expect(results.options.quick).toBe(true);
    for (const phase of ['cold: call', 'cold, empty code cache: call', 'warm: prepare', 'warm: call', 'snapshot: prepare', 'snapshot: call',
      'pool: eval, refill at take: call', 'pool: eval, refill after call: call', 'pool: snapshot, refill at take: call', 'createSnapshot']) {
      expect(results.inWorker.phases[phase]?.n, phase).toBeGreaterThan(0);
      expect(results.inWorker.phases[phase]?.median, phase).toBeGreaterThan(0);
    }
    expect(results.codeCache.map((row) => row.script)).toEqual(['guest runtime', 'compute tool', 'large tool']);
    for (const row of results.codeCache) expect(row.compileHit.median).toBeGreaterThan(0);

    for (const tool of ['echo', 'compute', 'fetch']) {
      for (const runner of ['paddock', 'deno']) {
        for (const concurrency of [1, 2, 4, 8]) {
          const cell = results.endToEnd.find((entry) => entry.tool === tool && entry.runner === runner && entry.concurrency === concurrency);
          expect(cell, `${tool} ${runner} ${concurrency}`).toBeDefined();
          if (cell === undefined) continue;
          expect(cell.calls).toBeGreaterThan(0);
          expect(cell.latency.median).toBeGreaterThan(0);
          expect(cell.throughput).toBeGreaterThan(0);
        }
      }
    }
    expect(results.ipcRoundTrip.n).toBeGreaterThan(0);
    expect(results.pacedIpcRoundTrip.n).toBe(20);
    expect(results.pacedIsolateHop.n).toBe(20);
    // Every call of section 4 was in flight at once, and the coordinator and both workers were measured.
    expect(results.inFlight).toMatchObject({ calls: 40, ok: 40, heldAtOnce: 40, peak: { workerCount: 2 } });
    expect(results.inFlight.peak.coordinator).toBeGreaterThan(0);
    expect(results.inFlight.peak.workers).toBeGreaterThan(0);
    expect(results.inFlight.plateauPssMiB).toBeGreaterThan(0);
    expect(results.crashRecovery.kills).toBe(2);
    expect(results.crashRecovery.servingMs.n).toBe(2);
    expect(results.crashRecovery.exitSeenMs.n).toBe(2);
    expect(results.verdict.text.length).toBeGreaterThan(0);
  }, 240_000);

  it('runs only the sections asked for', async () => {
    const dir = await tempDir();
    const json = path.join(dir, 'bench.json');
    const { code, stdout } = await runBench(['--quick', '--only', 'crash', '--crashes', '1', '--json', json]);
    expect(code).toBe(0);
    expect(stdout).toContain('5. A worker crash');
    expect(stdout).not.toContain('2-3. End to end');
    const results = JSON.parse(await readFile(json, 'utf8')) as { endToEnd: unknown; inWorker: unknown; crashRecovery: { kills: number } };
    expect(results).toMatchObject({ endToEnd: null, inWorker: null, crashRecovery: { kills: 1 } });
  }, 120_000);

  it('summarizes with nearest-rank percentiles', () => {
    const samples = Array.from({ length: 100 }, (_, index) => 100 - index);
    expect(summarize(samples)).toMatchObject({ n: 100, median: 50, p90: 90, p99: 99, min: 1, max: 100, mean: 50.5 });
    expect(summarize([7])).toMatchObject({ median: 7, p90: 7, p99: 7 });
    expect(summarize([]).n).toBe(0);
  });

  it('reads its options', () => {
    expect(parseOptions(['--quick'])).toMatchObject({ quick: true, iterations: 8, rounds: 2 });
    expect(parseOptions(['--iterations', '50', '--json', 'out.json', '--workers', '3', '--warm', '0'])).toMatchObject({ iterations: 50, json: 'out.json', workers: 3, warmIsolates: 0, quick: false });
    expect(() => parseOptions(['--iterations', '0'])).toThrow(/--iterations must be an integer >= 1/);
    expect(() => parseOptions(['--bogus'])).toThrow();
    expect(parseOptions(['--quick'])).toMatchObject({ inFlight: 40, crashes: 2 });
    expect(parseOptions([])).toMatchObject({ inFlight: 500, crashes: 7 });
    expect([...parseOptions(['--only', 'e2e, crash']).sections]).toEqual(['e2e', 'crash']);
    expect(() => parseOptions(['--only', 'memory'])).toThrow(/unknown section "memory"/);
  });
});
