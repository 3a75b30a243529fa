/**
 * Pins: the model client drives the real `openai` SDK against an OpenAI-compatible server on
 * loopback: streamed text arrives as deltas, tool-call arguments streamed in pieces are assembled,
 * a non-streamed answer gives the same reply; 429 (honouring Retry-After), 5xx, timeouts, stalls,
 * malformed bodies and dropped connections are retried with backoff, each retry reported; a
 * refusal (4xx) is not; an unreachable endpoint is named with its cause; the caller's abort wins.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ModelError, OpenAIModelClient } from '../../runtime/agent/model-client.ts';
import type { ModelClientOptions, ModelRequest, RetryNotice } from '../../runtime/agent/model-client.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import { modelClientOptions } from '../../runtime/sessions/agent-runtime.ts';
import { startFakeOpenAI } from '../helpers/fake-openai.ts';
import type { FakeOpenAI } from '../helpers/fake-openai.ts';

let fake: FakeOpenAI;

beforeAll(async () => { fake = await startFakeOpenAI(); });
afterAll(async () => { await fake.close(); });
beforeEach(() => {
  fake.requests.length = 0;
  fake.fallback(undefined);
});

const client = (options: Partial<ModelClientOptions> = {}) =>
  new OpenAIModelClient({ baseUrl: fake.url, apiKey: 'sk-test', retryBaseMs: 1, retryMaxMs: 100, ...options });

const request = (stream: boolean): ModelRequest => ({
  model: 'fake-model', stream,
  messages: [{ role: 'user', content: 'hi' }],
  tools: [{ type: 'function', function: { name: 'echo', description: 'Echo.', parameters: { type: 'object' } } }],
});

async function complete(stream: boolean, options: Partial<ModelClientOptions> = {}, signal = new AbortController().signal) {
  const deltas: string[] = [];
  const retries: RetryNotice[] = [];
  const reply = await client(options).complete(request(stream), { signal, onTextDelta: (text) => deltas.push(text), onRetry: (notice) => retries.push(notice) });
  return { reply, deltas, retries };
}

async function failure(stream: boolean, options: Partial<ModelClientOptions> = {}): Promise<{ error: ModelError; retries: RetryNotice[] }> {
  const retries: RetryNotice[] = [];
  try {
    await client(options).complete(request(stream), { signal: new AbortController().signal, onRetry: (notice) => retries.push(notice) });
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    return { error: error as ModelError, retries };
  }
  expect.fail('the call succeeded');
}

describe.each([true, false])('an answer (streamed: %s)', (stream) => {
  it('carries the text and the tool calls, arguments whole', async () => {
    fake.script({
      text: 'Let me check.', textChunk: 3, argumentChunk: 2,
      toolCalls: [{ id: 'call_a', name: 'echo', arguments: { text: 'héllo "quoted"' } }, { id: 'call_b', name: 'echo', arguments: '' }],
    });
    const { reply, deltas } = await complete(stream);
    expect(reply).toEqual({
      text: 'Let me check.', finishReason: 'tool_calls',
      toolCalls: [{ id: 'call_a', name: 'echo', arguments: '{"text":"héllo \\"quoted\\""}' }, { id: 'call_b', name: 'echo', arguments: '' }],
    });
    expect(deltas.join('')).toBe('Let me check.');
    if (stream) expect(deltas).toEqual(['Let', ' me', ' ch', 'eck', '.']);
    const sent = fake.requests[0]!;
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toMatchObject({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'echo' } }] });
    expect(sent.body.stream === true).toBe(stream);
  });

  it('retries 429 after its Retry-After, and 500, then succeeds', async () => {
    fake.script({ error: 429, headers: { 'retry-after-ms': '30' } }, { error: 500 }, { text: 'done' });
    const { reply, retries } = await complete(stream);
    expect(reply.text).toBe('done');
    expect(retries.map((notice) => [notice.attempt, notice.error.kind])).toEqual([[1, 'rate_limited'], [2, 'server_error']]);
    expect(retries[0]?.delayMs).toBe(30);
    expect(fake.requests).toHaveLength(3);
  });

  it('retries a malformed body and a dropped connection', async () => {
    fake.script({ malformed: true }, { drop: true }, { text: 'fine' });
    const { reply, retries } = await complete(stream);
    expect(reply.text).toBe('fine');
    expect(retries.map((notice) => notice.error.kind)).toEqual(['bad_response', 'unreachable']);
  });

  it('gives up after its retries with the last error', async () => {
    fake.fallback(() => ({ error: 503, message: 'overloaded upstream' }));
    const { error, retries } = await failure(stream, { maxRetries: 2 });
    expect(error).toMatchObject({ kind: 'server_error', status: 503 });
    expect(error.message).toBe('The model endpoint failed: it answered 503: 503 overloaded upstream');
    expect(error.message).not.toContain(fake.url);
    expect(retries).toHaveLength(2);
    expect(fake.requests).toHaveLength(3);
  });
});

describe('errors that are not retried', () => {
  it('a refusal (400) surfaces at once', async () => {
    fake.script({ error: 400, message: 'bad tool schema' });
    const { error, retries } = await failure(true);
    expect(error).toMatchObject({ kind: 'rejected', status: 400, retryable: false });
    expect(error.message).toContain('bad tool schema');
    expect(retries).toEqual([]);
  });

  it('a Retry-After longer than the longest wait', async () => {
    fake.script({ error: 429, headers: { 'retry-after': '3600' } });
    const { error, retries } = await failure(true);
    expect(error.kind).toBe('rate_limited');
    expect(retries).toEqual([]);
  });

  it('a stream that stalls after text reached the caller (a retry would repeat it)', async () => {
    fake.script({ stall: true, text: 'partial' });
    const deltas: string[] = [];
    const attempt = client({ idleTimeoutMs: 150 }).complete(request(true), { signal: new AbortController().signal, onTextDelta: (text) => deltas.push(text) });
    await expect(attempt).rejects.toMatchObject({ kind: 'timeout' });
    expect(deltas).toEqual(['partial']);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('timeouts and reachability', () => {
  it('abandons a request that gets no answer, retries, then reports the timeout', async () => {
    fake.script({ hang: true }, { hang: true });
    const { error, retries } = await failure(false, { requestTimeoutMs: 150, maxRetries: 1 });
    expect(error).toMatchObject({ kind: 'timeout', message: 'The model endpoint did not answer in time.' });
    expect(retries).toHaveLength(1);
  });

  it('names an unreachable endpoint and its cause', async () => {
    const closed = await startFakeOpenAI();
    await closed.close();
    const unreachable = new OpenAIModelClient({ baseUrl: closed.url, maxRetries: 1, retryBaseMs: 1 });
    const attempt = unreachable.complete(request(true), { signal: new AbortController().signal });
    // The code, not the address: callers of a run need not learn where the endpoint lives.
    await expect(attempt).rejects.toMatchObject({ kind: 'unreachable', message: 'Cannot reach the model endpoint: ECONNREFUSED.' });
  });

  it('stops at once when the caller aborts, without retrying', async () => {
    fake.script({ hang: true });
    const controller = new AbortController();
    const attempt = client().complete(request(true), { signal: controller.signal });
    await fake.waitForRequests(1);
    controller.abort();
    await expect(attempt).rejects.not.toBeInstanceOf(ModelError);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('the operator\'s llm settings', () => {
  it('reach the client: llm.maxRetries 0 makes one attempt, 2 makes three', async () => {
    const llm = loadConfig({ env: {}, cwd: '/srv/paddock' }).llm;
    fake.fallback(() => ({ error: 500, message: 'down' }));
    const attempts = async (maxRetries: number): Promise<number> => {
      fake.requests.length = 0;
      const model = new OpenAIModelClient(modelClientOptions({ ...llm, baseUrl: fake.url, maxRetries, retryBaseMs: 1, retryMaxMs: 5 }));
      await expect(model.complete(request(false), { signal: new AbortController().signal, onTextDelta: () => undefined, onRetry: () => undefined }))
        .rejects.toMatchObject({ kind: 'server_error' });
      return fake.requests.length;
    };
    expect(await attempts(0)).toBe(1);
    expect(await attempts(2)).toBe(3);
  });
});
