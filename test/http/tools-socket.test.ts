/**
 * Pins the tool API over a real loopback socket (node-server, as the service runs it): SSE events
 * reach the client while the call is still running; a client that disconnects aborts its call
 * (streamed or not), which ends at once and frees its slot; and a flood of 200 simultaneous
 * invokes against small concurrency bounds is answered only with 200 or 429 (with Retry-After),
 * never a 5xx, with both statuses present.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_KEY, INVOKE_KEY, bearer } from '../helpers/app.ts';
import { startGate } from './gate.ts';
import type { Gate } from './gate.ts';
import { sseReader, startToolApp, toolSource } from './tool-app.ts';
import type { ToolApp } from './tool-app.ts';

const MAX_CONCURRENT = 2;
const MAX_QUEUED = 4;
const FLOOD = 200;

let t: ToolApp;
let gate: Gate;
let url: string;

beforeAll(async () => {
  gate = await startGate();
  t = await startToolApp({
    files: {
      // Sends an update, then waits for the gate to answer /<key>, then returns what it said.
      'gated.ts': toolSource('gated', `ctx.update("waiting for " + params.key); const response = await fetch("${gate.url}/" + params.key, { signal: ctx.signal }); return "gate said " + await response.text();`, {
        parameters: '{ type: "object", properties: { key: { type: "string" } }, required: ["key"] }',
        permissions: '{ net: ["127.0.0.1"] }',
      }),
    },
    policy: { net: ['127.0.0.1'] },
    sandbox: { maxConcurrentCalls: MAX_CONCURRENT, maxQueuedCalls: MAX_QUEUED, callsPerWorker: 8 },
  });
  url = await t.listen();
}, 30_000);

afterAll(async () => {
  await t.close();
  await gate.close();
});

const invoke = (params: unknown, options: { sse?: boolean; signal?: AbortSignal } = {}): Promise<Response> =>
  fetch(`${url}/v1/tools/gated/invoke`, {
    method: 'POST',
    headers: { ...bearer(INVOKE_KEY), 'content-type': 'application/json', ...(options.sse === true ? { accept: 'text/event-stream' } : {}) },
    body: JSON.stringify({ params }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });

const idle = (): void => {
  expect({ running: t.system.coordinator.limiter.running, queued: t.system.coordinator.limiter.queued }).toEqual({ running: 0, queued: 0 });
};

describe('SSE over a socket', () => {
  it('delivers an update while the call is still running, then the one result', async () => {
    const response = await invoke({ key: 'stream' }, { sse: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = sseReader(response.body!);
    expect(await events.next()).toEqual({ event: 'update', data: JSON.stringify({ text: 'waiting for stream' }) });
    gate.open('stream', 'go');
    const result = await events.next();
    expect(result?.event).toBe('result');
    expect(JSON.parse(result!.data)).toMatchObject({ tool: 'gated', ok: true, content: 'gate said go' });
    expect(await events.next()).toBeUndefined();
  });
});

describe('client disconnect', () => {
  it('aborts a streamed call: the tool\'s fetch is dropped and the slot freed', async () => {
    const client = new AbortController();
    const response = await invoke({ key: 'sse-abandoned' }, { sse: true, signal: client.signal });
    const events = sseReader(response.body!);
    expect(await events.next()).toMatchObject({ event: 'update' });
    await gate.arrived('sse-abandoned');
    client.abort();
    await gate.dropped('sse-abandoned');
    await vi.waitFor(idle, { timeout: 2000, interval: 5 });
    expect(t.logs.records().filter((record) => Number(record['level']) >= 50)).toEqual([]);
  });

  it('aborts a JSON call the same way', async () => {
    const client = new AbortController();
    const pending = invoke({ key: 'json-abandoned' }, { signal: client.signal }).catch((error: unknown) => error);
    await gate.arrived('json-abandoned');
    client.abort();
    expect(await pending).toMatchObject({ name: 'AbortError' });
    await gate.dropped('json-abandoned');
    await vi.waitFor(idle, { timeout: 2000, interval: 5 });
  });
});

describe('a flood of simultaneous invokes', () => {
  it(`answers ${FLOOD} calls only with 200 or 429 (Retry-After), never a 5xx`, async () => {
    // Held calls fill the running and queued slots; the gate opens when the first refusal arrives.
    let refused!: () => void;
    const firstRefusal = new Promise<void>((resolve) => { refused = resolve; });
    void firstRefusal.then(() => { gate.open('flood', 'ok'); });
    const outcomes = await Promise.all(Array.from({ length: FLOOD }, async () => {
      const response = await invoke({ key: 'flood' });
      if (response.status === 429) refused();
      return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() as Record<string, unknown> };
    }));

    const statuses = new Set(outcomes.map((outcome) => outcome.status));
    expect([...statuses].sort()).toEqual([200, 429]);
    const answered = outcomes.filter((outcome) => outcome.status === 200);
    const overloaded = outcomes.filter((outcome) => outcome.status === 429);
    expect(answered.length).toBeGreaterThanOrEqual(MAX_CONCURRENT + MAX_QUEUED);
    for (const outcome of answered) expect(outcome.body).toMatchObject({ ok: true, content: 'gate said ok' });
    for (const outcome of overloaded) {
      expect(outcome.retryAfter).toBe('1');
      expect(outcome.body).toMatchObject({
        type: 'urn:paddock:problem:overloaded', title: 'Too many requests', status: 429,
        detail: `Too many calls: ${MAX_CONCURRENT} running and ${MAX_QUEUED} queued (the limits). Retry shortly.`,
      });
    }
    idle();
  });
});

describe('a POST with no body at all', () => {
  it('is not refused for its missing Content-Type (POST /v1/tools/reload as curl -X POST sends it)', async () => {
    const response = await fetch(`${url}/v1/tools/reload`, { method: 'POST', headers: bearer(ADMIN_KEY) });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ errors: [] });
  });
});
