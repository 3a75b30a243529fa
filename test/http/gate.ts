import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP server that holds each request for /<key> until the test opens that key, so a
 * tool can be kept in flight (it fetches the gate) and the test learns by events, never by delays,
 * when the call got there and whether its connection was dropped.
 */
export interface Gate {
  /** Base URL, e.g. http://127.0.0.1:40123 */
  readonly url: string;
  /** Resolves once a request for `key` has arrived (now or earlier). */
  arrived(key: string): Promise<void>;
  /** Resolves once a request for `key` lost its connection before it was answered. */
  dropped(key: string): Promise<void>;
  /** Answers the waiting and all later requests for `key` with `body`. */
  open(key: string, body?: string): void;
  close(): Promise<void>;
}

interface Slot {
  waiting: http.ServerResponse[];
  body: string | undefined;
  arrived: Promise<void>;
  markArrived: () => void;
  dropped: Promise<void>;
  markDropped: () => void;
}

export async function startGate(): Promise<Gate> {
  const slots = new Map<string, Slot>();
  const slot = (key: string): Slot => {
    let found = slots.get(key);
    if (found === undefined) {
      let markArrived = (): void => undefined;
      let markDropped = (): void => undefined;
      const arrived = new Promise<void>((resolve) => { markArrived = resolve; });
      const dropped = new Promise<void>((resolve) => { markDropped = resolve; });
      found = { waiting: [], body: undefined, arrived, markArrived, dropped, markDropped };
      slots.set(key, found);
    }
    return found;
  };
  const server = http.createServer((request, response) => {
    const entry = slot((request.url ?? '/').slice(1));
    if (entry.body !== undefined) {
      response.end(entry.body);
      return;
    }
    entry.waiting.push(response);
    response.once('close', () => { if (!response.writableFinished) entry.markDropped(); });
    entry.markArrived();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrived: (key) => slot(key).arrived,
    dropped: (key) => slot(key).dropped,
    open(key, body = 'opened') {
      const entry = slot(key);
      entry.body = body;
      for (const response of entry.waiting.splice(0)) response.end(body);
    },
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
    },
  };
}
