/**
 * Pins the session API (SPEC §5) over a real socket: create, read, list, delete; a message runs the
 * loop and answers with JSON or SSE (the event names documented in the OpenAPI description); the
 * scripted conversation returns the user tool's result under its call id; a second run on a busy
 * session gets 409; cancel and a client that disconnects abort the running tool and keep a
 * consistent history; bad input gets its status (404, 400, 413); a failing model endpoint is an
 * `error` event or a problem naming the cause, and the session stays usable; another caller's
 * session is invisible; a restart keeps every session and its context.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { toolResultIn } from '../helpers/fake-openai.ts';
import { userTool } from '../agent/harness.ts';
import { ADMIN_KEY, OTHER_KEY, SseReader, startSessionHarness } from './harness.ts';
import type { SessionHarness } from './harness.ts';

let h: SessionHarness;
const TOOLS = {
  'lookup.ts': userTool('lookup', 'return "found:" + params.text;'),
  'slow.ts': userTool('slow', 'ctx.update("started"); await new Promise((r) => setTimeout(r, 30000)); return "finished";'),
};

beforeAll(async () => {
  h = await startSessionHarness({ userTools: TOOLS, limits: { maxMessageChars: 1000 }, model: { maxRetries: 1 } });
});
afterAll(async () => { await h.close(); });
beforeEach(() => { h.base.fake.reset(); });

async function newSession(key?: string): Promise<string> {
  const response = await h.post('/v1/sessions', {}, key === undefined ? {} : { key });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

async function session(id: string): Promise<{ running: boolean; history: { entry: Record<string, unknown> }[]; tools: string[] }> {
  const response = await h.request(`/v1/sessions/${id}`);
  expect(response.status).toBe(200);
  return await response.json() as { running: boolean; history: { entry: Record<string, unknown> }[]; tools: string[] };
}

const entries = async (id: string) => (await session(id)).history.map((item) => item.entry);

describe('sessions', () => {
  it('are created, read, listed and deleted', async () => {
    const created = await h.post('/v1/sessions', {});
    expect(created.status).toBe(201);
    const body = await created.json() as Record<string, unknown>;
    expect(body).toEqual({ id: expect.stringMatching(/^ses_/), profile: 'default', createdAt: expect.any(String), updatedAt: expect.any(String), running: false });
    const id = body['id'] as string;
    const view = await session(id);
    expect(view).toMatchObject({ id, running: false, history: [], todo: [], scratchpad: [] });
    expect(view.tools).toEqual(['lookup', 'slow']);
    const listed = await (await h.request('/v1/sessions')).json() as { sessions: { id: string }[] };
    expect(listed.sessions.map((item) => item.id)).toContain(id);
    expect((await h.request(`/v1/sessions/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await h.request(`/v1/sessions/${id}`)).status).toBe(404);
  });

  it('with an unknown profile are refused (400)', async () => {
    const unknown = await h.post('/v1/sessions', { profile: 'nope' });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ detail: 'There is no profile "nope". Profiles: default.', errors: [{ pointer: '/profile' }] });
  });

  it('of another caller are invisible; admins see them', async () => {
    const id = await newSession();
    expect((await h.request(`/v1/sessions/${id}`, { key: OTHER_KEY })).status).toBe(404);
    expect((await h.post(`/v1/sessions/${id}/messages`, { content: 'hi' }, { key: OTHER_KEY })).status).toBe(404);
    expect((await h.request(`/v1/sessions/${id}`, { key: ADMIN_KEY })).status).toBe(200);
    const listed = await (await h.request('/v1/sessions', { key: OTHER_KEY })).json() as { sessions: unknown[] };
    expect(listed.sessions).toEqual([]);
  });
});

describe('a message', () => {
  it('runs the scripted conversation and answers JSON (model not streaming)', async () => {
    h.base.fake.script(
      { toolCalls: [{ id: 'call_json_1', name: 'lookup', arguments: { text: 'json' } }] },
      { text: 'It is found:json.' },
    );
    const id = await newSession();
    const response = await h.post(`/v1/sessions/${id}/messages`, { content: 'Look up json.' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      sessionId: id, status: 'ended', reason: 'answered', text: 'It is found:json.', steps: 2,
      toolCalls: [{ callId: 'call_json_1', tool: 'lookup', ok: true, content: 'found:json', metadata: null, terminate: false, durationMs: expect.any(Number), refused: false, images: [] }],
    });
    expect(h.base.fake.requests[0]?.body.tools?.map((tool) => tool.function.name)).toEqual(['lookup', 'slow']);
    expect(toolResultIn(h.base.fake.requests[1], 'call_json_1')).toBe('found:json');
    expect(await entries(id)).toEqual([
      { type: 'user', content: 'Look up json.' },
      { type: 'tool-call', callId: 'call_json_1', tool: 'lookup', arguments: '{"text":"json"}' },
      { type: 'tool-result', callId: 'call_json_1', tool: 'lookup', ok: true, content: 'found:json', durationMs: expect.any(Number) },
      { type: 'assistant', content: 'It is found:json.' },
      { type: 'run-end', reason: 'answered', steps: 2 },
    ]);
  });

  it('streams SSE events as the run goes', async () => {
    h.base.fake.script(
      { text: 'Looking.', toolCalls: [{ id: 'call_sse_1', name: 'lookup', arguments: { text: 'sse' } }], argumentChunk: 2 },
      { text: 'Found it.' },
    );
    const id = await newSession();
    const response = await h.post(`/v1/sessions/${id}/messages`, { content: 'Look up sse.' }, { headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = await new SseReader(response).rest();
    const names = events.map((event) => event.event);
    expect(names.filter((name) => name !== 'delta')).toEqual(['step', 'tool_call', 'tool_result', 'step', 'done']);
    expect(events.filter((event) => event.event === 'delta').map((event) => event.data['text']).join('')).toBe('Looking.Found it.');
    expect(events.find((event) => event.event === 'tool_call')?.data).toEqual({ callId: 'call_sse_1', tool: 'lookup', arguments: '{"text":"sse"}' });
    expect(events.find((event) => event.event === 'tool_result')?.data).toMatchObject({ callId: 'call_sse_1', ok: true, content: 'found:sse' });
    expect(events.at(-1)).toEqual({ event: 'done', data: { reason: 'answered', steps: 2, text: 'Found it.' } });
    expect(toolResultIn(h.base.fake.requests[1], 'call_sse_1')).toBe('found:sse');
  });

  it('is refused when empty (400), over the limit (413), or for an unknown session (404)', async () => {
    const id = await newSession();
    const empty = await h.post(`/v1/sessions/${id}/messages`, { content: '  ' });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ detail: 'The message is empty; send some text in "content".' });
    const missing = await h.post(`/v1/sessions/${id}/messages`, {});
    expect(missing.status).toBe(400);
    const long = await h.post(`/v1/sessions/${id}/messages`, { content: 'x'.repeat(1001) });
    expect(long.status).toBe(413);
    expect(await long.json()).toMatchObject({ detail: 'The message has 1001 characters; the limit is 1000.' });
    const unknown = await h.post('/v1/sessions/ses_00000000000000000000000000000000/messages', { content: 'hi' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ detail: 'There is no session "ses_00000000000000000000000000000000".' });
    expect(h.base.fake.requests).toHaveLength(0);
    expect(await entries(id)).toEqual([]);
  });
});

describe('one run at a time, cancel and disconnect', () => {
  it('answers 409 to a second run, and cancel aborts the running tool', async () => {
    h.base.fake.script({ toolCalls: [{ id: 'call_slow_1', name: 'slow', arguments: {} }] });
    const id = await newSession();
    const first = await h.post(`/v1/sessions/${id}/messages`, { content: 'Be slow.' }, { headers: { accept: 'text/event-stream' } });
    const events = new SseReader(first);
    await events.until('tool_update');
    expect((await session(id)).running).toBe(true);

    const second = await h.post(`/v1/sessions/${id}/messages`, { content: 'Me too.' });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ type: 'urn:paddock:problem:conflict', detail: expect.stringContaining('already running a turn') });

    const cancel = await h.post(`/v1/sessions/${id}/cancel`, {});
    expect(await cancel.json()).toEqual({ cancelled: true });
    const rest = await events.rest();
    expect(rest.map((event) => event.event)).toEqual(['tool_result', 'done']);
    expect(rest[0]?.data).toMatchObject({ callId: 'call_slow_1', ok: false, error: { kind: 'aborted' } });
    expect(rest[1]?.data).toMatchObject({ reason: 'cancelled' });
    expect((await session(id)).running).toBe(false);
    expect(await (await h.post(`/v1/sessions/${id}/cancel`, {})).json()).toEqual({ cancelled: false });
  });

  it('a client that disconnects cancels the run and its tool', async () => {
    h.base.fake.script({ toolCalls: [{ id: 'call_slow_2', name: 'slow', arguments: {} }] });
    const id = await newSession();
    const controller = new AbortController();
    const response = await h.post(`/v1/sessions/${id}/messages`, { content: 'Be slow.' }, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    await new SseReader(response).until('tool_update');
    controller.abort();
    await vi.waitFor(async () => { expect((await session(id)).running).toBe(false); }, { timeout: 10_000, interval: 20 });
    const history = await entries(id);
    expect(history.slice(-2)).toEqual([
      { type: 'tool-result', callId: 'call_slow_2', tool: 'slow', ok: false, content: '', error: { kind: 'aborted', message: expect.any(String) }, durationMs: expect.any(Number) },
      { type: 'run-end', reason: 'cancelled', steps: 1 },
    ]);
    expect(h.base.fake.requests).toHaveLength(1);
  });

  it('a JSON client that disconnects cancels the run too', async () => {
    h.base.fake.script({ toolCalls: [{ id: 'call_slow_3', name: 'slow', arguments: {} }] });
    const id = await newSession();
    const controller = new AbortController();
    const pending = h.post(`/v1/sessions/${id}/messages`, { content: 'Be slow.' }, { signal: controller.signal }).catch((error: unknown) => error);
    await vi.waitFor(async () => { expect((await entries(id)).some((entry) => entry['type'] === 'tool-call')).toBe(true); }, { timeout: 10_000, interval: 20 });
    controller.abort();
    await pending;
    await vi.waitFor(async () => { expect((await session(id)).running).toBe(false); }, { timeout: 10_000, interval: 20 });
    expect((await entries(id)).at(-1)).toEqual({ type: 'run-end', reason: 'cancelled', steps: 1 });
  });
});

describe('a failing model endpoint', () => {
  it('is an error event naming the cause; the session stays usable', async () => {
    h.base.fake.fallback(() => ({ error: 502, message: 'bad gateway upstream' }));
    const id = await newSession();
    const response = await h.post(`/v1/sessions/${id}/messages`, { content: 'Hello?' }, { headers: { accept: 'text/event-stream' } });
    const events = await new SseReader(response).rest();
    expect(events.map((event) => event.event)).toEqual(['step', 'retry', 'error']);
    expect(events.at(-1)?.data).toEqual({ kind: 'server_error', message: 'The model endpoint failed: it answered 502: 502 bad gateway upstream', steps: 0 });

    h.base.fake.fallback(undefined);
    h.base.fake.script({ text: 'Here now.' });
    const retried = await h.post(`/v1/sessions/${id}/messages`, { content: 'Hello again?' });
    expect(await retried.json()).toMatchObject({ status: 'ended', text: 'Here now.' });
    expect(h.base.fake.requests.at(-1)?.body.messages.map((message) => message.content)).toEqual(['Hello?', 'Hello again?']);
  });

  it('is a 502 problem naming the cause (not the endpoint\'s address) for a JSON client', async () => {
    h.base.fake.fallback(() => ({ error: 500, message: 'meltdown' }));
    const id = await newSession();
    const response = await h.post(`/v1/sessions/${id}/messages`, { content: 'Hello?' });
    expect(response.status).toBe(502);
    const body = await response.text();
    expect(body).not.toContain(h.base.fake.url);
    expect(JSON.parse(body)).toMatchObject({
      type: 'urn:paddock:problem:bad-gateway', title: 'Bad gateway', sessionId: id, steps: 0,
      detail: 'The model endpoint failed (server_error): The model endpoint failed: it answered 500: 500 meltdown The session is intact; send the message again to retry.',
      error: { kind: 'server_error' },
    });
    expect((await session(id)).running).toBe(false);
  });
});

describe('the OpenAPI document', () => {
  it('describes the session routes and names every SSE event', async () => {
    const document = await (await fetch(`${h.url}/openapi.json`)).json() as { paths: Record<string, Record<string, { description?: string }>> };
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/v1/sessions', '/v1/sessions/{id}', '/v1/sessions/{id}/messages', '/v1/sessions/{id}/cancel']));
    const description = document.paths['/v1/sessions/{id}/messages']?.['post']?.description ?? '';
    for (const name of ['step', 'delta', 'tool_call', 'tool_update', 'tool_result', 'retry', 'done', 'error']) expect(description).toContain(`\`${name}\``);
  });
});
