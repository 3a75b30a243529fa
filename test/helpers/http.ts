import http from 'node:http';
import net from 'node:net';

export type UploadOutcome = { status: number; body: string } | { error: string };

/** A POST whose body is still being sent: in flight on the server until `finish` is called. */
export interface SlowUpload {
  /** Resolves once the server has read the headers and dispatched the request (it answered 100 Continue). */
  readonly inFlight: Promise<void>;
  /** Sends the rest of the body and ends the request. */
  finish(rest: string): void;
  /** The response, or the error code of the connection when the server cut it. */
  readonly outcome: Promise<UploadOutcome>;
  /** Drops the connection (for an upload the test will not finish). */
  abort(): void;
}

/**
 * Starts a chunked JSON upload with `Expect: 100-continue` and sends `first` once the server asks
 * for the body, so the test knows, by an event and not by a delay, that the request is in flight.
 */
export function startSlowUpload(url: string, headers: Record<string, string>, first: string, agent?: http.Agent): SlowUpload {
  const request = http.request(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', expect: '100-continue', 'transfer-encoding': 'chunked' },
    ...(agent === undefined ? { agent: false } : { agent }),
  });
  const inFlight = new Promise<void>((resolve) => {
    request.once('continue', () => {
      request.write(first, () => { resolve(); });
    });
  });
  const outcome = new Promise<UploadOutcome>((resolve) => {
    request.once('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => { body += chunk; });
      response.once('end', () => { resolve({ status: response.statusCode ?? 0, body }); });
      response.once('error', (error: NodeJS.ErrnoException) => { resolve({ error: error.code ?? error.message }); });
    });
    // `on`, not `once`: a connection cut after the response must not become an unhandled error.
    request.on('error', (error: NodeJS.ErrnoException) => { resolve({ error: error.code ?? error.message }); });
  });
  request.flushHeaders();
  return { inFlight, finish: (rest) => { request.end(rest); }, outcome, abort: () => { request.destroy(); } };
}

/** How a fresh TCP connection to `url` ends: 'connected' or the error code (ECONNREFUSED ...). */
export function tryConnect(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) });
    socket.once('connect', () => { socket.destroy(); resolve('connected'); });
    socket.once('error', (error: NodeJS.ErrnoException) => { resolve(error.code ?? error.message); });
  });
}
