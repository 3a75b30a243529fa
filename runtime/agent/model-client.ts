import OpenAI from 'openai';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai/error';
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ModelErrorKind } from './events.ts';
import type { ContextMessage } from './messages.ts';
import { ToolCallStream } from './tool-call-stream.ts';
import type { AssembledToolCall } from './tool-call-stream.ts';

/**
 * The openai SDK wrapper: one chat-completions call, streamed or not, with its own retry policy
 * (the SDK's retries are off so that every attempt is visible as an event and a stalled stream
 * is caught too). SDK errors become a ModelError with a kind and a message that names the cause.
 */

export interface ModelRequest {
  readonly model: string;
  readonly messages: readonly ContextMessage[];
  readonly tools: readonly ChatCompletionFunctionTool[];
  readonly stream: boolean;
}

export interface ModelReply {
  readonly text: string;
  readonly toolCalls: readonly AssembledToolCall[];
  readonly finishReason: string | null;
}

export interface RetryNotice {
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: ModelError;
}

export interface ModelCallOptions {
  readonly signal: AbortSignal;
  readonly onTextDelta?: ((text: string) => void) | undefined;
  readonly onRetry?: ((notice: RetryNotice) => void) | undefined;
}

export interface ModelClient {
  complete(request: ModelRequest, options: ModelCallOptions): Promise<ModelReply>;
}

export class ModelError extends Error {
  readonly kind: ModelErrorKind;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(kind: ModelErrorKind, message: string, options: { retryable: boolean; status?: number | undefined; retryAfterMs?: number | undefined; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.kind = kind;
    this.retryable = options.retryable;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export interface ModelClientOptions {
  readonly baseUrl: string;
  readonly apiKey?: string | undefined;
  /** Time allowed for a whole non-streamed answer, or for a streamed one to start. @defaultValue 120_000 */
  readonly requestTimeoutMs?: number | undefined;
  /** A streamed answer that sends nothing for this long is abandoned (and retried). @defaultValue 60_000 */
  readonly idleTimeoutMs?: number | undefined;
  /** Retries after the first attempt, for timeouts, 429, 5xx, connection errors and malformed answers. @defaultValue 3 */
  readonly maxRetries?: number | undefined;
  /** First backoff delay; doubled per retry, with ±25% jitter. @defaultValue 500 */
  readonly retryBaseMs?: number | undefined;
  /** Longest backoff delay, and the longest Retry-After honoured (a longer one is not waited for). @defaultValue 20_000 */
  readonly retryMaxMs?: number | undefined;
  /** The fetch the SDK uses (tests, proxies). */
  readonly fetch?: typeof fetch | undefined;
}

const DEFAULTS = { requestTimeoutMs: 120_000, idleTimeoutMs: 60_000, maxRetries: 3, retryBaseMs: 500, retryMaxMs: 20_000 } as const;

export class OpenAIModelClient implements ModelClient {
  readonly #client: OpenAI;
  readonly #options: { readonly [Key in keyof typeof DEFAULTS]: number };

  constructor(options: ModelClientOptions) {
    this.#options = {
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs ?? DEFAULTS.idleTimeoutMs,
      maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
      retryBaseMs: options.retryBaseMs ?? DEFAULTS.retryBaseMs,
      retryMaxMs: options.retryMaxMs ?? DEFAULTS.retryMaxMs,
    };
    this.#client = new OpenAI({
      baseURL: options.baseUrl,
      // Local OpenAI-compatible servers often take no key; the SDK insists on one.
      apiKey: options.apiKey ?? 'no-key',
      maxRetries: 0,
      // Failures are translated and reported here (events, logs); the SDK's own console lines would only repeat them.
      logLevel: 'off',
      timeout: this.#options.requestTimeoutMs,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
  }

  async complete(request: ModelRequest, options: ModelCallOptions): Promise<ModelReply> {
    for (let attempt = 1; ; attempt++) {
      const output = { emitted: false };
      const onTextDelta = (text: string): void => {
        output.emitted = true;
        options.onTextDelta?.(text);
      };
      try {
        return await this.#attempt(request, options.signal, onTextDelta);
      } catch (caught) {
        options.signal.throwIfAborted();
        const error = caught instanceof ModelError ? caught : this.#translate(caught);
        // Once text reached the client a retry would repeat it; past the budget, the error stands.
        const delayMs = this.#backoff(attempt, error);
        if (!error.retryable || output.emitted || attempt > this.#options.maxRetries || delayMs === undefined) throw error;
        options.onRetry?.({ attempt, delayMs, error });
        await sleep(delayMs, options.signal);
      }
    }
  }

  async #attempt(request: ModelRequest, signal: AbortSignal, onTextDelta: (text: string) => void): Promise<ModelReply> {
    // One controller per attempt: the caller's signal, plus our own stall timer.
    const controller = new AbortController();
    const forward = (): void => { controller.abort(signal.reason); };
    signal.addEventListener('abort', forward, { once: true });
    const stall = { happened: false };
    let timer: NodeJS.Timeout | undefined;
    const arm = (ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(() => { stall.happened = true; controller.abort(); }, ms);
    };
    const body = {
      model: request.model,
      messages: request.messages as unknown as ChatCompletionMessageParam[],
      ...(request.tools.length === 0 ? {} : { tools: [...request.tools] }),
    };
    try {
      arm(this.#options.requestTimeoutMs);
      if (!request.stream) {
        const completion = await this.#client.chat.completions.create({ ...body, stream: false }, { signal: controller.signal });
        const choice = (completion as Partial<typeof completion>).choices?.[0];
        if (choice?.message === undefined) throw new ModelError('bad_response', 'The model endpoint answered without a choice.', { retryable: true });
        const text = choice.message.content ?? '';
        if (text !== '') onTextDelta(text);
        const toolCalls = (choice.message.tool_calls ?? []).flatMap((call) =>
          call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }] : []);
        return { text, toolCalls, finishReason: choice.finish_reason };
      }
      const stream = await this.#client.chat.completions.create({ ...body, stream: true }, { signal: controller.signal });
      const calls = new ToolCallStream();
      let text = '';
      let finishReason: string | null = null;
      let chunks = 0;
      for await (const chunk of stream) {
        arm(this.#options.idleTimeoutMs);
        chunks++;
        const choice = chunk.choices[0];
        if (choice === undefined) continue;
        const content = choice.delta.content;
        if (typeof content === 'string' && content !== '') {
          text += content;
          onTextDelta(content);
        }
        for (const delta of choice.delta.tool_calls ?? []) calls.push(delta);
        if (choice.finish_reason !== null) finishReason = choice.finish_reason;
      }
      // An aborted stream just ends: tell a stall from the caller's cancellation.
      if (stall.happened) throw new ModelError('timeout', 'The model endpoint stopped sending before its answer was complete.', { retryable: true });
      signal.throwIfAborted();
      if (chunks === 0) throw new ModelError('bad_response', 'The model endpoint ended the stream without sending anything.', { retryable: true });
      return { text, toolCalls: calls.finish(), finishReason };
    } catch (error) {
      if (stall.happened && !signal.aborted && !(error instanceof ModelError)) {
        throw new ModelError('timeout', 'The model endpoint did not answer in time.', { retryable: true, cause: error });
      }
      throw error;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', forward);
    }
  }

  #translate(error: unknown): ModelError {
    if (error instanceof APIConnectionTimeoutError) {
      return new ModelError('timeout', 'The model endpoint did not answer in time.', { retryable: true, cause: error });
    }
    if (error instanceof APIUserAbortError) {
      return new ModelError('timeout', 'The request to the model endpoint was abandoned.', { retryable: true, cause: error });
    }
    if (error instanceof APIConnectionError) {
      return new ModelError('unreachable', `Cannot reach the model endpoint: ${rootCause(error)}.`, { retryable: true, cause: error });
    }
    if (error instanceof APIError) {
      const { status: reported, headers, message } = error as APIError;
      const status = reported ?? 0;
      const detail = `it answered ${status}: ${message}`;
      if (status === 429) return new ModelError('rate_limited', `The model endpoint is rate limiting: ${detail}`, { retryable: true, status, retryAfterMs: retryAfter(headers), cause: error });
      if (status >= 500 || status === 408 || status === 409) {
        return new ModelError('server_error', `The model endpoint failed: ${detail}`, { retryable: true, status, retryAfterMs: retryAfter(headers), cause: error });
      }
      if (status === 0) return new ModelError('bad_response', `The model endpoint sent an error in its stream: ${message}`, { retryable: true, cause: error });
      return new ModelError('rejected', `The model endpoint refused the request: ${detail}`, { retryable: false, status, cause: error });
    }
    const message = error instanceof Error ? error.message : String(error);
    return new ModelError('bad_response', `The model endpoint sent a malformed answer: ${message}`, { retryable: true, cause: error });
  }

  /** The delay before the next attempt, or undefined when the server asks for longer than we wait. */
  #backoff(attempt: number, error: ModelError): number | undefined {
    if (error.retryAfterMs !== undefined) return error.retryAfterMs > this.#options.retryMaxMs ? undefined : error.retryAfterMs;
    const exponential = Math.min(this.#options.retryMaxMs, this.#options.retryBaseMs * 2 ** (attempt - 1));
    return Math.round(exponential * (0.75 + Math.random() * 0.5));
  }
}

function retryAfter(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after');
  if (value === null || value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * The innermost cause's error code (fetch wraps ECONNREFUSED and friends twice), else its message.
 * Only the code when there is one: the message names the endpoint's address, which the callers of
 * a run (who see this) need not learn; the operator knows the configured endpoint.
 */
function rootCause(error: Error): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  const root = current as Error & { code?: unknown };
  return typeof root.code === 'string' ? root.code : root.message;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason instanceof Error ? signal.reason : new DOMException('Aborted', 'AbortError'));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
