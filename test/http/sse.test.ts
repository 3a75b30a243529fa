/**
 * Pins streamInvoke's contract on its own, with calls the test controls: a call refused before it
 * runs answers with its own status (never a 200 stream); updates sent before the stream opened are
 * not lost; a failure after the stream opened is one `error` event carrying the problem; and
 * cancelling the response aborts the call's signal.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../../runtime/http/env.ts';
import { ProblemError } from '../../runtime/http/problem.ts';
import type { InvokeResponseBody } from '../../runtime/http/schemas.ts';
import { streamInvoke } from '../../runtime/http/sse.ts';
import type { StreamedCall } from '../../runtime/http/sse.ts';
import { INVOKE_KEY, bearer, makeTestApp } from '../helpers/app.ts';
import { parseSse, sseReader } from './tool-app.ts';

const RESULT: InvokeResponseBody = { callId: 'c-1', tool: 't', ok: true, content: 'done', metadata: null, durationMs: 1 };
const nextTurn = (): Promise<void> => new Promise((resolve) => { setImmediate(resolve); });

/** The real app's middleware stack with one streaming route over `start`. */
function appStreaming(start: StreamedCall) {
  const { app, logs } = makeTestApp();
  const routes = new OpenAPIHono<AppEnv>();
  routes.post('/stream', (c) => streamInvoke(c, start));
  app.route('/v1/test', routes);
  const request = () => Promise.resolve(app.request('/v1/test/stream', { method: 'POST', headers: bearer(INVOKE_KEY) }));
  return { request, logs };
}

describe('streamInvoke', () => {
  it('answers a call refused before it runs with the refusal\'s own status and headers', async () => {
    const { request } = appStreaming(() => Promise.reject(new ProblemError('overloaded', 'Too many calls.', { headers: { 'retry-after': '1' } })));
    const response = await request();
    expect(response.status).toBe(429);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('retry-after')).toBe('1');
  });

  it('keeps updates sent before the stream opened, in order, before the one result', async () => {
    const { request } = appStreaming(async (emit) => {
      emit('at once');
      await nextTurn();
      emit('later');
      return RESULT;
    });
    const events = parseSse(await (await request()).text());
    expect(events).toEqual([
      { event: 'update', data: '{"text":"at once"}' },
      { event: 'update', data: '{"text":"later"}' },
      { event: 'result', data: JSON.stringify(RESULT) },
    ]);
  });

  it('sends a failure after the stream opened as one `error` event with the problem, and logs a bug', async () => {
    const { request, logs } = appStreaming(async (emit) => {
      await nextTurn();
      await nextTurn();
      emit('working');
      throw new Error('secret internals');
    });
    const response = await request();
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain('secret internals');
    const events = parseSse(text);
    expect(events.map((event) => event.event)).toEqual(['update', 'error']);
    expect(JSON.parse(events[1]!.data)).toMatchObject({ type: 'urn:paddock:problem:internal', status: 500, instance: '/v1/test/stream' });
    expect(logs.records().some((record) => record['msg'] === 'streamed call failed after it started')).toBe(true);
  });

  it('aborts the call when the client cancels the stream', async () => {
    let aborted!: () => void;
    const abortSeen = new Promise<void>((resolve) => { aborted = resolve; });
    const { request } = appStreaming(async (emit, signal) => {
      emit('started');
      await new Promise<void>((resolve) => { signal.addEventListener('abort', () => { resolve(); }, { once: true }); });
      aborted();
      return { ...RESULT, ok: false, error: { kind: 'aborted', message: 'The call was aborted.' } };
    });
    const reader = sseReader((await request()).body!);
    expect(await reader.next()).toEqual({ event: 'update', data: '{"text":"started"}' });
    await reader.cancel();
    await abortSeen;
  });
});
