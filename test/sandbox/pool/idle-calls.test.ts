/**
 * Pins: `callsPerWorker` bounds only CPU-busy calls. A call awaiting a granted fetch is idle and
 * leaves its slot to the next call, so one worker with callsPerWorker 1 holds many I/O-bound calls at
 * once; `maxCallsPerWorker` bounds the calls a worker holds in all (busy or idle); calls that compute
 * still run one at a time. Real worker processes, the real guest runtime, a real loopback server
 * that answers only when the test's rule says so (events, not delays).
 */
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle } from '../../../sandbox/bundler/tool-bundle.ts';
import { bundleToolModule } from '../../../sandbox/bundler/tool-bundle.ts';
import { normalizeGrant } from '../../../sandbox/grants/grant.ts';
import { DEFAULT_LIMITS } from '../../../sandbox/limits.ts';
import { startSandbox } from '../../../sandbox/sandbox.ts';
import type { Sandbox, SandboxOptions, ToolOutcome } from '../../../sandbox/sandbox.ts';
import type { WireGrant } from '../../../sandbox/worker/messages.ts';

let folder: string;
let fetcher: Bundle;
let spinner: Bundle;

/**
 * A loopback server that holds every request until `answerNow` says how many of the oldest held
 * ones to answer, asked on each arrival.
 */
interface HoldingServer {
  url: (name: string) => string;
  grant: WireGrant;
  arrived: () => number;
  /** Most requests held unanswered at once. */
  maxHeld: () => number;
  /** Answers every held request, and from now on every request at once. */
  release: () => void;
  close: () => Promise<void>;
}

async function startHoldingServer(answerNow: (state: { held: number; arrived: number }) => number, onArrival: () => void = () => undefined): Promise<HoldingServer> {
  const held: { response: ServerResponse; url: string }[] = [];
  let arrived = 0;
  let maxHeld = 0;
  let released = false;
  const answer = (count: number): void => {
    for (const { response, url } of held.splice(0, count)) response.end(`served ${url}`);
  };
  const server = createServer((request, response) => {
    arrived++;
    held.push({ response, url: request.url ?? '' });
    maxHeld = Math.max(maxHeld, held.length);
    onArrival();
    answer(released ? held.length : answerNow({ held: held.length, arrived }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    grant: normalizeGrant({ net: [`127.0.0.1:${port}`] }, { cwd: folder }) as unknown as WireGrant,
    arrived: () => arrived,
    maxHeld: () => maxHeld,
    release: () => { released = true; answer(held.length); },
    close: async () => {
      answer(held.length);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function withSandbox<T>(options: Pick<SandboxOptions, 'callsPerWorker' | 'maxCallsPerWorker'>, run: (sandbox: Sandbox) => Promise<T>): Promise<T> {
  const sandbox = await startSandbox({ limits: DEFAULT_LIMITS, audit: { record: () => undefined }, workers: 1, warmIsolates: 1, ...options });
  try {
    return await run(sandbox);
  } finally {
    await sandbox.close();
  }
}

const fetchCall = (sandbox: Sandbox, server: HoldingServer, index: number): Promise<ToolOutcome> => sandbox.runTool({
  identity: { callId: `fetch-${index}`, tool: 'fetcher', caller: 'test' },
  bundle: fetcher, params: { url: server.url(`call-${index}`) }, grant: server.grant, cwd: folder, secrets: {},
  // Calls that never reach the server fail at this limit instead of hanging the test.
  limits: { wallTimeMs: 8000 },
});

const spinCall = (sandbox: Sandbox, index: number, ms: number): Promise<ToolOutcome> => sandbox.runTool({
  identity: { callId: `spin-${index}`, tool: 'spinner', caller: 'test' },
  bundle: spinner, params: { ms }, grant: { net: [], read: [], write: [], env: [] }, cwd: folder, secrets: {},
});

/** Every outcome, or as soon as one fails just that one: a stalled run ends at its first call's wall limit. */
function allOrFirstFailure(outcomes: Promise<ToolOutcome>[]): Promise<ToolOutcome[]> {
  const firstFailure = new Promise<ToolOutcome[]>((resolve) => {
    for (const outcome of outcomes) void outcome.then((settled) => { if (!settled.ok) resolve([settled]); });
  });
  return Promise.race([Promise.all(outcomes), firstFailure]);
}

const spanOf = (outcome: ToolOutcome): { started: number; ended: number } => {
  expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true });
  return JSON.parse(outcome.ok ? outcome.content : '{}') as { started: number; ended: number };
};

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'paddock-idle-calls-'));
  await writeFile(path.join(folder, 'fetcher.ts'), 'export default async (p: { url: string }) => (await fetch(p.url)).text();');
  await writeFile(path.join(folder, 'spinner.ts'), [
    'export default (p: { ms: number }) => {',
    '  const started = Date.now();',
    '  while (Date.now() - started < p.ms) { /* computing */ }',
    '  return JSON.stringify({ started, ended: Date.now() });',
    '};',
  ].join('\n'));
  fetcher = await bundleToolModule(path.join(folder, 'fetcher.ts'), folder);
  spinner = await bundleToolModule(path.join(folder, 'spinner.ts'), folder);
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('calls awaiting I/O', () => {
  it('do not count against callsPerWorker: one worker with callsPerWorker 1 holds 12 fetches at once', async () => {
    const count = 12;
    // Answers nothing until all 12 requests are in: only calls in flight together can finish.
    const server = await startHoldingServer(({ held, arrived }) => (arrived >= count ? held : 0));
    try {
      const outcomes = await withSandbox({ callsPerWorker: 1 }, (sandbox) => allOrFirstFailure(Array.from({ length: count }, (_, index) => fetchCall(sandbox, server, index))));
      expect(outcomes.map((outcome) => (outcome.ok ? outcome.content : outcome.error.kind))).toEqual(Array.from({ length: count }, (_, index) => `served /call-${index}`));
      expect(server.maxHeld()).toBe(count);
    } finally {
      await server.close();
    }
  });

  it('count against maxCallsPerWorker: with 3, at most 3 reach the server before one is answered', async () => {
    const count = 8;
    const bound = 3;
    let sandbox: Sandbox | undefined;
    const inFlightAtArrival: number[] = [];
    // Answers the oldest request whenever `bound` are held (a call must finish before another may come),
    // and the rest once all have arrived.
    const server = await startHoldingServer(
      ({ held, arrived }) => (arrived >= count ? held : held >= bound ? 1 : 0),
      () => { inFlightAtArrival.push(sandbox?.pool.inFlight ?? -1); },
    );
    try {
      const outcomes = await withSandbox({ callsPerWorker: 1, maxCallsPerWorker: bound }, (started) => {
        sandbox = started;
        return allOrFirstFailure(Array.from({ length: count }, (_, index) => fetchCall(started, server, index)));
      });
      expect(outcomes.map((outcome) => (outcome.ok ? outcome.content : outcome.error.kind))).toEqual(Array.from({ length: count }, (_, index) => `served /call-${index}`));
      expect(server.arrived()).toBe(count);
      // The bound was reached (idle calls filled it past callsPerWorker 1) and never passed.
      expect(server.maxHeld()).toBe(bound);
      expect(Math.max(...inFlightAtArrival)).toBe(bound);
    } finally {
      await server.close();
    }
  });

  it('leave their slot to a call that computes: it runs to the end while a fetch is still held', async () => {
    let fetchArrived: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => { fetchArrived = resolve; });
    const server = await startHoldingServer(() => 0, () => { fetchArrived(); });
    try {
      await withSandbox({ callsPerWorker: 1 }, async (sandbox) => {
        const pending = fetchCall(sandbox, server, 0);
        let fetchSettled = false;
        void pending.then(() => { fetchSettled = true; });
        await arrived;
        const spin = await spinCall(sandbox, 0, 50);
        expect(spin).toMatchObject({ ok: true });
        expect(fetchSettled).toBe(false); // the fetch is still held: both were in flight at once
        server.release();
        expect(await pending).toMatchObject({ ok: true, content: 'served /call-0' });
      });
    } finally {
      await server.close();
    }
  });
});

describe('calls that compute', () => {
  it('still run callsPerWorker at a time: with 1, the second starts after the first ended', async () => {
    await withSandbox({ callsPerWorker: 1 }, async (sandbox) => {
      // Once alone first: the worker then holds the bundle and its code cache, so the pair's calls
      // spend next to no time being set up (an isolate waiting to be set up on a loaded machine is idle).
      spanOf(await spinCall(sandbox, 9, 10));
      const [first, second] = (await Promise.all([spinCall(sandbox, 0, 150), spinCall(sandbox, 1, 150)])).map(spanOf);
      const [earlier, later] = first!.started <= second!.started ? [first!, second!] : [second!, first!];
      expect(later.started).toBeGreaterThanOrEqual(earlier.ended);
    });
  });

  it('overlap when callsPerWorker allows two (the check above can see an overlap)', async () => {
    await withSandbox({ callsPerWorker: 2 }, async (sandbox) => {
      const [first, second] = (await Promise.all([spinCall(sandbox, 0, 300), spinCall(sandbox, 1, 300)])).map(spanOf);
      const [earlier, later] = first!.started <= second!.started ? [first!, second!] : [second!, first!];
      expect(later.started).toBeLessThan(earlier.ended);
    });
  });
});
