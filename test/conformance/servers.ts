/**
 * The loopback HTTP servers the fetch modules talk to. The main server is granted by literal
 * `127.0.0.1:{port}`; the second one (`{port2}`) is never granted, so a redirect to it leaves the grant.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackServers {
  port: number;
  port2: number;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function route(port2: () => number) {
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const port = (request.socket.address() as AddressInfo).port;
    switch (url.pathname) {
      case '/text':
        response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('hello from loopback');
        return;
      case '/json':
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, items: [1, 2, 3], nested: { name: 'paddock' } }));
        return;
      case '/echo': {
        const body = await readBody(request);
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
          method: request.method, path: url.pathname, query: url.search, body,
          contentType: request.headers['content-type'] ?? null, probe: request.headers['x-probe'] ?? null,
          contentLength: request.headers['content-length'] ?? null,
        }));
        return;
      }
      case '/status': {
        // ?code=<status>[&reason=<reason phrase on the wire>]
        const code = Number(url.searchParams.get('code') ?? '200');
        const reason = url.searchParams.get('reason') ?? undefined;
        response.writeHead(code, reason, { 'content-type': 'text/plain' }).end(code === 204 || code === 304 ? undefined : `status ${code}`);
        return;
      }
      case '/headers':
        response.writeHead(200, [
          ['content-type', 'text/plain'], ['x-conformance', 'yes'], ['X-Mixed-Case', 'Value'],
          ['set-cookie', 'a=1; Path=/'], ['set-cookie', 'b=2; Path=/'], ['cache-control', 'no-store'],
        ]).end('headers');
        return;
      case '/redirect': {
        // ?to=<path or absolute url>&code=<3xx>
        const to = url.searchParams.get('to') ?? '/text';
        const code = Number(url.searchParams.get('code') ?? '302');
        const location = to.replace('{port2}', String(port2())).replace('{port}', String(port));
        response.writeHead(code, { location }).end();
        return;
      }
      default:
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => { resolve((server.address() as AddressInfo).port); });
  });
}

export async function startLoopbackServers(): Promise<LoopbackServers> {
  let second = 0;
  const main = createServer((request, response) => { void route(() => second)(request, response); });
  const other = createServer((_request, response) => { response.writeHead(200, { 'content-type': 'text/plain' }).end('second server'); });
  const port = await listen(main);
  second = await listen(other);
  return {
    port,
    port2: second,
    close: async () => {
      main.closeAllConnections();
      other.closeAllConnections();
      await Promise.all([main, other].map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}
