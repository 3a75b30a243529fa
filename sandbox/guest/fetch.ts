/**
 * fetch, Request and Response over the host's async `fetch` op. Bodies are whole byte buffers
 * (the host caps their size); `body` offers a minimal one-chunk stream for code that iterates it.
 */
import type { FetchResult } from '../protocol.ts';
import { hostCancel, hostRequest } from './bridge.ts';
import { base64ToBytes, bufferSourceBytes, copyBytes, TextDecoder, utf8Encode } from './encoding.ts';
import { abortError } from './errors.ts';
import { AbortSignal, createSignal, signalAbort } from './events.ts';
import { Headers, headersFromWire, headersToWire, setGuard, type HeadersInit } from './headers.ts';
import { customInspect, named, type InspectFunction } from './inspect-hook.ts';
import {
  ArrayBufferIsView, ArrayBufferCtor, JSONParse, JSONStringify, ObjectDefineProperty, ObjectPrototypeToString, PromiseReject,
  PromiseResolve, RangeErrorCtor, RegExpPrototypeTest, StringPrototypeIndexOf, StringPrototypeSlice,
  StringPrototypeToLowerCase, StringPrototypeToUpperCase, SymbolAsyncIterator, SymbolToStringTag, TypeErrorCtor,
  Uint8ArrayCtor, withResolvers, PromisePrototypeThen, toDOMString, toBoolean, toNumber,
} from './primordials.ts';
import { URL, URLSearchParams, parseUrlString } from './url.ts';

export type BodyInit = string | ArrayBuffer | ArrayBufferView | URLSearchParams | null; // what tools pass; anything else is stringified

interface ExtractedBody { bytes: Uint8Array; contentType: string | null }

const utf8 = new TextDecoder();

function extractBody(init: unknown): ExtractedBody {
  if (typeof init === 'string') return { bytes: utf8Encode(init), contentType: 'text/plain;charset=UTF-8' };
  if (init instanceof URLSearchParams) return { bytes: utf8Encode(init.toString()), contentType: 'application/x-www-form-urlencoded;charset=UTF-8' };
  const tag = ObjectPrototypeToString(init);
  if (ArrayBufferIsView(init) || tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]') {
    // The Fetch standard copies the bytes when the body is extracted.
    return { bytes: copyBytes(bufferSourceBytes(init, 'body')), contentType: null };
  }
  // Blob, FormData and ReadableStream are not offered; anything else is stringified, as Web IDL does.
  return { bytes: utf8Encode(toDOMString(init)), contentType: 'text/plain;charset=UTF-8' };
}

/** Body state shared by Request and Response: bytes held once, consumed once. */
class BodyState {
  bytes: Uint8Array | null;
  used = false;
  constructor(bytes: Uint8Array | null) { this.bytes = bytes; }

  consume(): Promise<Uint8Array> {
    if (this.used) return PromiseReject(new TypeErrorCtor('Body already consumed'));
    this.used = true;
    return PromiseResolve(this.bytes ?? new Uint8ArrayCtor(0));
  }

  #stream: MinimalStream | null = null;

  /** The same stream object on every read of `body`, as on the Web. */
  stream(): MinimalStream | null {
    if (this.bytes === null) return null;
    this.#stream ??= new MinimalStream(this);
    return this.#stream;
  }
}

/** Enough of ReadableStream for `getReader().read()` loops and `for await` over a body. */
class MinimalStream {
  readonly #state: BodyState;
  #locked = false;
  constructor(state: BodyState) { this.#state = state; }

  get locked(): boolean { return this.#locked; }

  getReader(): { read(): Promise<{ done: boolean; value: Uint8Array | undefined }>; releaseLock(): void; cancel(): Promise<void>; closed: Promise<void> } {
    if (this.#locked) throw new TypeErrorCtor('ReadableStream is locked.');
    this.#locked = true;
    const state = this.#state;
    let sent = false;
    return {
      read: () => {
        if (!sent) {
          sent = true;
          if (!state.used) {
            state.used = true;
            const bytes = state.bytes ?? new Uint8ArrayCtor(0);
            if (bytes.length > 0) return PromiseResolve({ done: false, value: bytes });
          }
        }
        return PromiseResolve({ done: true, value: undefined });
      },
      releaseLock: () => { this.#locked = false; },
      cancel: () => { state.used = true; return PromiseResolve(undefined); },
      closed: PromiseResolve(undefined),
    };
  }

  cancel(): Promise<void> {
    this.#state.used = true;
    return PromiseResolve(undefined);
  }

  [customInspect](inspect: InspectFunction): string {
    return inspect(named('ReadableStream', { locked: this.#locked, state: this.#state.used ? 'closed' : 'readable', supportsBYOB: false }));
  }

  [SymbolAsyncIterator](): AsyncIterableIterator<Uint8Array> {
    const reader = this.getReader();
    const iterator: AsyncIterableIterator<Uint8Array> = {
      next: async (): Promise<IteratorResult<Uint8Array>> => {
        const { done, value } = await reader.read();
        return done || value === undefined ? { done: true, value: undefined } : { done: false, value };
      },
      [SymbolAsyncIterator]: () => iterator,
    };
    return iterator;
  }
}
ObjectDefineProperty(MinimalStream.prototype, SymbolToStringTag, { value: 'ReadableStream', configurable: true });

const NULL_BODY_STATUSES = [101, 103, 204, 205, 304];
const REDIRECT_STATUSES = [301, 302, 303, 307, 308];
const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;
const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function includes(list: number[], value: number): boolean {
  for (let i = 0; i < list.length; i++) if (list[i] === value) return true;
  return false;
}

async function readText(state: BodyState): Promise<string> {
  return utf8.decode(await state.consume());
}

export interface ResponseInit { status?: number; statusText?: string; headers?: HeadersInit }

type ResponseType = 'basic' | 'default' | 'error';

interface ResponseFields {
  type: ResponseType;
  url: string;
  redirected: boolean;
  status: number;
  statusText: string;
  headers: Headers;
  body: BodyState;
}

// Runtime factories hand ready-made fields to the constructor through this slot (never set while user code runs).
let pendingResponse: ResponseFields | null = null;

export function makeResponse(fields: ResponseFields): Response {
  pendingResponse = fields;
  try {
    return new Response();
  } finally {
    pendingResponse = null;
  }
}

export class Response {
  readonly #fields: ResponseFields;

  constructor(body: unknown = null, init: ResponseInit = {}) {
    if (pendingResponse !== null) {
      this.#fields = pendingResponse;
      pendingResponse = null;
      return;
    }
    const status = init.status === undefined ? 200 : toNumber(init.status);
    if ((status < 200 || status > 599) && status !== 101) {
      throw new RangeErrorCtor(`The status provided (${status}) is not equal to 101 and outside the range [200, 599]`);
    }
    const statusText = init.statusText === undefined ? '' : toDOMString(init.statusText);
    if (!RegExpPrototypeTest(REASON_PHRASE, statusText)) throw new TypeErrorCtor('Status text is not valid.');
    const headers = new Headers(init.headers);
    let bytes: Uint8Array | null = null;
    if (body !== null && body !== undefined) {
      if (includes(NULL_BODY_STATUSES, status)) throw new TypeErrorCtor('Response with null body status cannot have body');
      const extracted = extractBody(body);
      bytes = extracted.bytes;
      if (extracted.contentType !== null && !headers.has('content-type')) headers.append('content-type', extracted.contentType);
    }
    setGuard(headers, 'response');
    this.#fields = { type: 'default', url: '', redirected: false, status, statusText, headers, body: new BodyState(bytes) };
  }

  static error(): Response {
    const headers = new Headers();
    setGuard(headers, 'immutable');
    return makeResponse({ type: 'error', url: '', redirected: false, status: 0, statusText: '', headers, body: new BodyState(null) });
  }

  static redirect(url: string | URL, status = 302): Response {
    const parsed = parseUrlString(toDOMString(url));
    if (parsed === null) throw new TypeErrorCtor(`Invalid URL: '${url as string}'`);
    if (!includes(REDIRECT_STATUSES, status)) throw new RangeErrorCtor(`Invalid redirect status code: ${status}`);
    const headers = new Headers([['location', parsed]]);
    setGuard(headers, 'immutable');
    return makeResponse({ type: 'default', url: '', redirected: false, status, statusText: '', headers, body: new BodyState(null) });
  }

  static json(data: unknown, init: ResponseInit = {}): Response {
    const text = JSONStringify(data);
    if (text === undefined) throw new TypeErrorCtor('The data is not JSON serializable');
    const headers = new Headers(init.headers);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    return new Response(text, { ...init, headers });
  }

  get type(): string { return this.#fields.type; }
  get url(): string { return this.#fields.url; }
  get redirected(): boolean { return this.#fields.redirected; }
  get status(): number { return this.#fields.status; }
  get ok(): boolean { return this.#fields.status >= 200 && this.#fields.status <= 299; }
  get statusText(): string { return this.#fields.statusText; }
  get headers(): Headers { return this.#fields.headers; }
  get body(): MinimalStream | null { return this.#fields.body.stream(); }
  get bodyUsed(): boolean { return this.#fields.body.used; }

  text(): Promise<string> { return readText(this.#fields.body); }
  async json(): Promise<unknown> { return JSONParse(await readText(this.#fields.body)) as unknown; }
  async bytes(): Promise<Uint8Array> { return copyBytes(await this.#fields.body.consume()); }
  async arrayBuffer(): Promise<ArrayBuffer> { return copyBytes(await this.#fields.body.consume()).buffer as ArrayBuffer; }

  clone(): Response {
    const fields = this.#fields;
    if (fields.body.used) throw new TypeErrorCtor('Body is unusable');
    const headers = headersFromWire(headersToWire(fields.headers), fields.type === 'default' ? 'response' : 'immutable');
    const bytes = fields.body.bytes;
    return makeResponse({ ...fields, headers, body: new BodyState(bytes === null ? null : copyBytes(bytes)) });
  }

  [customInspect](inspect: InspectFunction): string {
    const fields = this.#fields;
    return inspect(named('Response', {
      body: this.body, bodyUsed: fields.body.used, headers: fields.headers, ok: this.ok, redirected: fields.redirected,
      status: fields.status, statusText: fields.statusText, url: fields.url,
    }));
  }
}
ObjectDefineProperty(Response.prototype, SymbolToStringTag, { value: 'Response', configurable: true });

export interface RequestInit {
  method?: string;
  headers?: HeadersInit;
  body?: BodyInit;
  signal?: AbortSignal | null;
  redirect?: 'follow' | 'manual' | 'error';
}

interface RequestFields {
  method: string;
  url: string;
  headers: Headers;
  body: BodyState;
  signal: AbortSignal;
  redirect: 'follow' | 'manual' | 'error';
}

const NORMALIZED_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'];

function normalizeMethod(method: string): string {
  if (!RegExpPrototypeTest(METHOD_TOKEN, method)) throw new TypeErrorCtor('Method is not valid');
  const upper = StringPrototypeToUpperCase(method);
  if (upper === 'CONNECT' || upper === 'TRACE' || upper === 'TRACK') throw new TypeErrorCtor('Method is forbidden');
  for (let i = 0; i < NORMALIZED_METHODS.length; i++) if (NORMALIZED_METHODS[i] === upper) return upper;
  return method;
}

let takeRequest: (request: Request) => RequestFields & { bytes: Uint8Array | null };

export class Request {
  readonly #fields: RequestFields;

  constructor(input: string | URL | Request, init: RequestInit = {}) {
    let base: RequestFields | null = null;
    let url: string;
    if (input instanceof Request) {
      base = input.#fields;
      url = base.url;
    } else {
      const text = toDOMString(input);
      const parsed = parseUrlString(text);
      if (parsed === null) throw new TypeErrorCtor(`Invalid URL: '${text}'`);
      url = parsed;
    }
    const method = init.method === undefined ? (base?.method ?? 'GET') : normalizeMethod(toDOMString(init.method));
    const redirect: unknown = init.redirect ?? base?.redirect ?? 'follow';
    if (redirect !== 'follow' && redirect !== 'manual' && redirect !== 'error') {
      throw new TypeErrorCtor(`Failed to construct 'Request': The provided value '${redirect as string}' is not a valid enum value of type RequestRedirect.`);
    }
    const headers = new Headers(init.headers ?? (base === null ? undefined : base.headers));
    const hasBody = init.body !== undefined && init.body !== null;
    if ((hasBody || (init.body === undefined && base !== null && base.body.bytes !== null)) && (method === 'GET' || method === 'HEAD')) {
      throw new TypeErrorCtor('Request with GET/HEAD method cannot have body');
    }
    let body: BodyState;
    if (hasBody) {
      const extracted = extractBody(init.body);
      if (extracted.contentType !== null && !headers.has('content-type')) headers.append('content-type', extracted.contentType);
      body = new BodyState(extracted.bytes);
    } else if (init.body === undefined && base !== null) {
      if (base.body.used) throw new TypeErrorCtor('Input request\'s body is unusable');
      body = new BodyState(base.body.bytes === null ? null : copyBytes(base.body.bytes));
    } else {
      body = new BodyState(null);
    }
    setGuard(headers, 'request');
    // The request's own signal follows the given one, as the Fetch standard says.
    const signal = createSignal();
    const follow: unknown = init.signal !== undefined ? init.signal : (base?.signal ?? null);
    if (follow !== null && follow !== undefined) {
      if (!(follow instanceof AbortSignal)) throw new TypeErrorCtor("Failed to construct 'Request': member signal is not of type AbortSignal.");
      if (follow.aborted) signalAbort(signal, follow.reason);
      else follow.addEventListener('abort', () => { signalAbort(signal, follow.reason); }, { once: true });
    }
    this.#fields = { method, url, headers, body, signal, redirect };
  }

  get method(): string { return this.#fields.method; }
  get url(): string { return this.#fields.url; }
  get headers(): Headers { return this.#fields.headers; }
  get signal(): AbortSignal { return this.#fields.signal; }
  get redirect(): string { return this.#fields.redirect; }
  get body(): MinimalStream | null { return this.#fields.body.stream(); }
  get bodyUsed(): boolean { return this.#fields.body.used; }
  get cache(): string { return 'default'; }
  get credentials(): string { return 'same-origin'; }
  get mode(): string { return 'cors'; }
  get destination(): string { return ''; }
  get referrer(): string { return 'about:client'; }
  get integrity(): string { return ''; }
  get keepalive(): boolean { return false; }

  text(): Promise<string> { return readText(this.#fields.body); }
  async json(): Promise<unknown> { return JSONParse(await readText(this.#fields.body)) as unknown; }
  async bytes(): Promise<Uint8Array> { return copyBytes(await this.#fields.body.consume()); }
  async arrayBuffer(): Promise<ArrayBuffer> { return copyBytes(await this.#fields.body.consume()).buffer as ArrayBuffer; }

  clone(): Request {
    if (this.#fields.body.used) throw new TypeErrorCtor('Body is unusable');
    return new Request(this);
  }

  static {
    // What fetch sends to the host; consumes the body.
    takeRequest = (request: Request): RequestFields & { bytes: Uint8Array | null } => {
      const fields = request.#fields;
      if (fields.body.used) throw new TypeErrorCtor('Body is unusable');
      const bytes = fields.body.bytes;
      if (bytes !== null) fields.body.used = true;
      return { ...fields, bytes };
    };
  }

  [customInspect](inspect: InspectFunction): string {
    const fields = this.#fields;
    return inspect(named('Request', {
      bodyUsed: fields.body.used, headers: fields.headers, method: fields.method, redirect: fields.redirect, url: fields.url,
    }));
  }
}
ObjectDefineProperty(Request.prototype, SymbolToStringTag, { value: 'Request', configurable: true });

function dataUrlResponse(url: string): Response {
  // data:[<mediatype>][;base64],<data>
  const comma = StringPrototypeIndexOf(url, ',');
  if (comma === -1) throw new TypeErrorCtor('Malformed data URL.');
  let mediaType = StringPrototypeSlice(url, 5, comma);
  const payload = StringPrototypeSlice(url, comma + 1);
  let base64 = false;
  const lower = StringPrototypeToLowerCase(mediaType);
  if (lower.length >= 7 && StringPrototypeSlice(lower, -7) === ';base64') {
    base64 = true;
    mediaType = StringPrototypeSlice(mediaType, 0, -7);
  }
  let bytes: Uint8Array;
  if (base64) {
    try {
      bytes = base64ToBytes(decodeURIComponent(payload));
    } catch {
      throw new TypeErrorCtor('Malformed data URL.');
    }
  } else {
    bytes = utf8Encode(decodeURIComponent(payload));
  }
  if (mediaType === '' || mediaType[0] === ';') mediaType = 'text/plain' + (mediaType === '' ? ';charset=US-ASCII' : mediaType);
  const headers = new Headers([['content-type', mediaType]]);
  setGuard(headers, 'immutable');
  return makeResponse({ type: 'basic', url, redirected: false, status: 200, statusText: 'OK', headers, body: new BodyState(bytes) });
}

function responseFromHost(result: FetchResult): Response {
  const bytes = result.body instanceof Uint8ArrayCtor ? result.body : new Uint8ArrayCtor(new ArrayBufferCtor(0));
  return makeResponse({
    type: 'basic',
    url: toDOMString(result.url),
    redirected: toBoolean(result.redirected),
    status: toNumber(result.status),
    statusText: toDOMString(result.statusText),
    headers: headersFromWire(result.headers, 'immutable'),
    body: new BodyState(includes(NULL_BODY_STATUSES, toNumber(result.status)) ? null : bytes),
  });
}

export function fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  let request: Request;
  let sent: ReturnType<typeof takeRequest>;
  try {
    request = input instanceof Request && init === undefined ? input : new Request(input, init);
    const signal = request.signal;
    if (signal.aborted) return PromiseReject(signal.reason);
    sent = takeRequest(request);
  } catch (error) {
    return PromiseReject(error);
  }
  const url = new URL(sent.url);
  const scheme = url.protocol;
  if (scheme === 'data:') {
    try {
      return PromiseResolve(dataUrlResponse(sent.url));
    } catch (error) {
      return PromiseReject(error);
    }
  }
  if (scheme !== 'http:' && scheme !== 'https:') {
    return PromiseReject(new TypeErrorCtor(`Url scheme '${StringPrototypeSlice(scheme, 0, -1)}' not supported`));
  }

  const { promise, resolve, reject } = withResolvers<Response>();
  let started: { id: number; promise: Promise<FetchResult> };
  try {
    started = hostRequest('fetch', { url: sent.url, method: sent.method, headers: headersToWire(sent.headers), body: sent.bytes, redirect: sent.redirect });
  } catch (error) {
    return PromiseReject(error);
  }
  let done = false;
  const onAbort = (): void => {
    if (done) return;
    done = true;
    hostCancel(started.id);
    reject(sent.signal.reason === undefined ? abortError() : sent.signal.reason);
  };
  sent.signal.addEventListener('abort', onAbort, { once: true });
  void PromisePrototypeThen(started.promise, (result) => {
    if (done) return;
    done = true;
    sent.signal.removeEventListener('abort', onAbort);
    try {
      resolve(responseFromHost(result));
    } catch (error) {
      reject(error);
    }
  }, (error: unknown) => {
    if (done) return;
    done = true;
    sent.signal.removeEventListener('abort', onAbort);
    reject(error);
  });
  return promise;
}
