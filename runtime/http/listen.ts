import type { Server } from 'node:http';
import { serve } from '@hono/node-server';

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  /** Slow-client bound: time allowed to receive the request headers. */
  readonly headersTimeoutMs: number;
}

/**
 * The Node listener for the app (the one place outside the app factory that knows about Hono's
 * node adapter). Resolves once the socket is bound; rejects with the listen error (EADDRINUSE ...).
 */
export function listen(fetch: (request: Request) => Response | Promise<Response>, options: ListenOptions): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch, hostname: options.host, port: options.port, serverOptions: { headersTimeout: options.headersTimeoutMs } },
      () => {
        server.off('error', reject);
        resolve(server as Server); // no createServer option: @hono/node-server uses node:http
      },
    );
    server.once('error', reject);
  });
}
