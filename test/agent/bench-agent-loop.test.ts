/**
 * Pins that the agent-loop benchmark (scripts/bench-agent-loop.ts, `npm run bench:agent`) runs end
 * to end in its quick mode, with the model in this process and in its own thread: every step was
 * measured, the table is printed and the JSON written. No timing is asserted (the machine is
 * shared; the figure belongs in the report).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseOptions } from '../../scripts/bench-agent-loop.ts';
import { tempDir } from '../helpers/temp.ts';
import { runNodeScript } from '../helpers/run-script.ts';

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/bench-agent-loop.ts');

const runBench = (args: readonly string[]) => runNodeScript(SCRIPT, args);

describe('bench-agent-loop', () => {
  it('parses its options and refuses bad ones', () => {
    expect(parseOptions(['--quick'])).toMatchObject({ runs: 4, steps: 10, warmup: 1, quick: true, stream: false, userTool: false, modelThread: false });
    expect(parseOptions(['--runs', '7', '--steps', '3', '--stream'])).toMatchObject({ runs: 7, steps: 3, stream: true });
    expect(() => parseOptions(['--steps', '1'])).toThrow('--steps must be an integer >= 2 (got "1")');
  });

  it.each([[[] as string[]], [['--model-thread', '--stream']]])('runs in quick mode (%j), prints the table and writes the JSON', async (extra) => {
    const json = path.join(await tempDir(), 'agent.json');
    const { code, stdout, stderr } = await runBench(['--quick', '--steps', '3', ...extra, '--json', json]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^Paddock agent-loop overhead: /);
    expect(stdout).toMatch(/^step, without tool time +12 /m);
    expect(stdout).toMatch(/^Target p50 <= 2 ms per step without tool time: (met|MISSED) \(median \d+\.\d\d ms, p90 \d+\.\d\d ms\)$/m);
    const result = JSON.parse(await readFile(json, 'utf8')) as { stepWithoutTools: { n: number; median: number }; toolTime: { n: number }; runSetUp: { n: number } };
    expect(result.stepWithoutTools.n).toBe(12);
    expect(result.stepWithoutTools.median).toBeGreaterThan(0);
    expect(result.toolTime.n).toBe(8);
    expect(result.runSetUp.n).toBe(4);
  });
});
