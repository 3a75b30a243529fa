/**
 * A fake OpenAI-compatible chat-completions server on loopback, for driving the real `openai` SDK:
 * scripted turns answered in order (streamed as SSE when the request asks, else one JSON body),
 * tool-call arguments streamed in pieces, and injected failures (HTTP errors with Retry-After,
 * a request that never gets an answer, a stream that stalls, a malformed body, a dropped socket).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeToolCall {
  readonly id: string;
  readonly name: string;
  /** An object is sent as its JSON text; a string is sent as it is (malformed JSON included). */
  readonly arguments: unknown;
}

export type FakeTurn =
  | {
    readonly text?: string;
    readonly toolCalls?: readonly FakeToolCall[];
    /** Characters per streamed text chunk. @defaultValue 4 */
    readonly textChunk?: number;
    /** Characters per streamed argument piece. @defaultValue 5 */
    readonly argumentChunk?: number;
    readonly finishReason?: string;
  }
  | { readonly error: number; readonly message?: string; readonly headers?: Readonly<Record<string, string>> }
  /** Headers and body never come (the client's timeout must fire). */
  | { readonly hang: true }
  /** Streams `text`, then sends nothing more and never ends. */
  | { readonly stall: true; readonly text: string }
  /** A 200 whose body is not what the API sends. */
  | { readonly malformed: true }
  /** The connection is destroyed without an answer. */
  | { readonly drop: true };

export interface RecordedRequest {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: {
    model: string;
    stream?: boolean;
    messages: { role: string; content: unknown; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }[];
    tools?: { type: string; function: { name: string; description: string; parameters: unknown } }[];
    [key: string]: unknown;
  };
}

export type Responder = (request: RecordedRequest) => FakeTurn;

export interface FakeOpenAI {
  /** The base URL to give the SDK, ending in /v1. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Queues turns; each request takes the next one. */
  script(...turns: (FakeTurn | Responder)[]): void;
  /** Answers requests that find the queue empty (default: a 500 that names the missing turn). */
  fallback(responder: Responder | undefined): void;
  /** Resolves once `count` requests have arrived in total. */
  waitForRequests(count: number): Promise<void>;
  /** Turns still queued. */
  pending(): number;
  /** Forgets queued turns, recorded requests and the fallback (between tests). */
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: (FakeTurn | Responder)[] = [];
  const requests: RecordedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let fallback: Responder | undefined;
  const held = new Set<http.ServerResponse>();
  let sequence = 0;

  const server = http.createServer((request, response) => {
    let raw = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => { raw += chunk; });
    request.on('end', () => {
      const recorded: RecordedRequest = { path: request.url ?? '', headers: request.headers, body: JSON.parse(raw || '{}') as RecordedRequest['body'] };
      requests.push(recorded);
      for (const waiter of [...waiters]) {
        if (requests.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      if (request.url !== '/v1/chat/completions' || request.method !== 'POST') {
        sendError(response, 404, `fake: no route ${request.method ?? ''} ${request.url ?? ''}`);
        return;
      }
      const next = queue.shift() ?? fallback;
      const turn = next === undefined
        ? { error: 500, message: `fake: no scripted turn left for request ${requests.length}` }
        : typeof next === 'function' ? next(recorded) : next;
      answer(turn, recorded, response, `chatcmpl-${++sequence}`);
    });
  });

  function answer(turn: FakeTurn, request: RecordedRequest, response: http.ServerResponse, id: string): void {
    if ('error' in turn) {
      sendError(response, turn.error, turn.message ?? `fake error ${turn.error}`, turn.headers);
      return;
    }
    if ('hang' in turn) {
      held.add(response);
      return;
    }
    if ('drop' in turn) {
      response.socket?.destroy();
      return;
    }
    if ('malformed' in turn) {
      response.writeHead(200, { 'content-type': request.body.stream === true ? 'text/event-stream' : 'application/json' });
      response.end(request.body.stream === true ? 'data: {"id": "x", "choices": [\n\n' : '{"id": "x", "object": "chat.comp');
      return;
    }
    if ('stall' in turn) {
      held.add(response);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(sse(chunk(id, request, { role: 'assistant', content: turn.text }, null)));
      return;
    }
    const text = turn.text ?? '';
    const calls = (turn.toolCalls ?? []).map((call) => ({
      id: call.id, name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    }));
    const finishReason = turn.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
    if (request.body.stream !== true) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({
        id, object: 'chat.completion', created: 1_700_000_000, model: request.body.model,
        choices: [{
          index: 0, finish_reason: finishReason, logprobs: null,
          message: {
            role: 'assistant', content: text === '' ? null : text, refusal: null,
            ...(calls.length === 0 ? {} : { tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) }),
          },
        }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      }));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let body = sse(chunk(id, request, { role: 'assistant', content: '' }, null));
    for (const piece of pieces(text, turn.textChunk ?? 4)) body += sse(chunk(id, request, { content: piece }, null));
    calls.forEach((call, index) => {
      body += sse(chunk(id, request, { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, null));
      for (const piece of pieces(call.arguments, turn.argumentChunk ?? 5)) {
        body += sse(chunk(id, request, { tool_calls: [{ index, function: { arguments: piece } }] }, null));
      }
    });
    body += sse(chunk(id, request, {}, finishReason));
    body += 'data: [DONE]\n\n';
    response.end(body);
  }

  await new Promise<void>((resolve) => { server.listen(0, '127.0.0.1', resolve); });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...turns) => { queue.push(...turns); },
    fallback: (responder) => { fallback = responder; },
    waitForRequests: (count) => requests.length >= count
      ? Promise.resolve()
      : new Promise((resolve) => { waiters.push({ count, resolve }); }),
    pending: () => queue.length,
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      fallback = undefined;
    },
    close: async () => {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => { server.close(() => { resolve(); }); });
    },
  };
}

function sendError(response: http.ServerResponse, status: number, message: string, headers: Readonly<Record<string, string>> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify({ error: { message, type: status === 429 ? 'rate_limit_error' : 'server_error', param: null, code: null } }));
}

function chunk(id: string, request: RecordedRequest, delta: Record<string, unknown>, finishReason: string | null): unknown {
  return { id, object: 'chat.completion.chunk', created: 1_700_000_000, model: request.body.model, choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] };
}

function sse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

function pieces(text: string, size: number): string[] {
  const result: string[] = [];
  for (let start = 0; start < text.length; start += size) result.push(text.slice(start, start + size));
  return result;
}

/** The `content` of the tool message answering `callId` in a recorded request, or undefined. */
export function toolResultIn(request: RecordedRequest | undefined, callId: string): string | undefined {
  const message = request?.body.messages.find((candidate) => candidate.role === 'tool' && candidate.tool_call_id === callId);
  return typeof message?.content === 'string' ? message.content : undefined;
}
