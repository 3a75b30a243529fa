import { mkdir, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { serve } from '@hono/node-server';
import type { ServerType } from '@hono/node-server';
import { KeyStore, loadOrCreateGeneratedKey } from './auth/keys.ts';
import type { Config } from './config/schema.ts';
import { createApp } from './http/app.ts';
import type { Logger } from './observability/logger.ts';
import { createMetrics } from './observability/metrics.ts';
import { PADDOCK_VERSION } from './version.ts';

/** A start-up problem the operator must fix; the CLI prints its message as one line and exits 1. */
export class StartupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

export interface RunningService {
  /** Base URL the service answers on, e.g. http://127.0.0.1:8787 */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish within `graceMs`, then closes what is left. */
  shutdown(graceMs?: number): Promise<{ forced: number }>;
}

export async function startService(config: Config, log: Logger): Promise<RunningService> {
  await ensureWritableDataDir(config.dataDir);
  const keys = await resolveKeys(config, log);
  let draining = false;
  const app = createApp({ config, log, metrics: createMetrics(), keys, version: PADDOCK_VERSION, isDraining: () => draining });

  const server = await listen(app.fetch, config);
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  log.info({ url, dataDir: config.dataDir, toolsDir: config.toolsDir, version: PADDOCK_VERSION }, 'paddock listening');

  return {
    url,
    port: address.port,
    async shutdown(graceMs = config.http.shutdownGraceMs) {
      draining = true;
      log.info({ graceMs }, 'shutting down: no new connections; waiting for in-flight requests');
      const closed = new Promise<void>((resolve) => server.close(() => { resolve(); }));
      // Idle keep-alive sockets would hold close() open for nothing.
      if ('closeIdleConnections' in server) server.closeIdleConnections();
      let forced = 0;
      const timer = setTimeout(() => {
        if ('closeAllConnections' in server) {
          forced = 1;
          log.warn({ graceMs }, 'grace period over: closing the remaining connections');
          server.closeAllConnections();
        }
      }, graceMs);
      await closed;
      clearTimeout(timer);
      log.info({ forced: forced > 0 }, 'shut down');
      return { forced };
    },
  };
}

async function resolveKeys(config: Config, log: Logger): Promise<KeyStore> {
  if (config.apiKeys.length > 0) return new KeyStore(config.apiKeys);
  if (!isLoopback(config.host)) {
    throw new StartupError(
      `refusing to listen on ${config.host} without configured API keys: set PADDOCK_API_KEYS or "apiKeys" in the config file, or listen on 127.0.0.1`,
    );
  }
  try {
    const generated = await loadOrCreateGeneratedKey(config.dataDir);
    // The file's path, never the key: logs are shipped and kept where keys must not be.
    log.info({ keyFile: generated.file, created: generated.created }, generated.created
      ? 'no API key configured: created one (scope admin); read it from the key file'
      : 'no API key configured: using the key in the key file');
    return new KeyStore([generated.key]);
  } catch (error) {
    throw new StartupError((error as Error).message, { cause: error });
  }
}

async function ensureWritableDataDir(dataDir: string): Promise<void> {
  const probe = path.join(dataDir, `.write-probe-${process.pid}`);
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await writeFile(probe, '');
    await rm(probe);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new StartupError(`the data folder ${dataDir} is not writable (${code}); set PADDOCK_DATA or "dataDir" to a folder this user can write`, { cause: error });
  }
}

function listen(fetch: (request: Request) => Response | Promise<Response>, config: Config): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname: config.host, port: config.port, serverOptions: { headersTimeout: config.http.headersTimeoutMs } }, () => {
      server.off('error', onError);
      resolve(server);
    });
    const onError = (error: NodeJS.ErrnoException) => {
      const where = `${config.host}:${config.port}`;
      const reason = error.code === 'EADDRINUSE' ? 'the address is already in use'
        : error.code === 'EACCES' ? 'permission denied'
        : error.code === 'EADDRNOTAVAIL' ? 'the address is not available on this machine'
        : error.code === 'ENOTFOUND' ? 'the host name does not resolve'
        : error.code ?? error.message;
      reject(new StartupError(`cannot listen on ${where}: ${reason}`, { cause: error }));
    };
    server.once('error', onError);
  });
}

export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./i.test(bare);
  return false;
}
