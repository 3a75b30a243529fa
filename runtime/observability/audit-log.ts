import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { AuditRecord, AuditSink } from '../../sandbox/audit.ts';
import type { Logger } from './logger.ts';

/**
 * The sandbox's AuditSink, implemented as an append-only JSON-lines file in the data folder (one
 * record per capability use or denial, with a timestamp). Denials also go to the service log as
 * warnings, so an operator watching logs sees a tool probing beyond its grant.
 */
export class AuditLog implements AuditSink {
  readonly file: string;
  readonly #stream: WriteStream;
  readonly #log: Logger;
  #failed = false;

  private constructor(file: string, stream: WriteStream, log: Logger) {
    this.file = file;
    this.#stream = stream;
    this.#log = log;
    stream.on('error', (error) => {
      // Keep serving; say it once, loudly.
      if (!this.#failed) log.error({ err: error, file }, 'audit log write failed; records are going to the service log only');
      this.#failed = true;
    });
  }

  static async open(dataDir: string, log: Logger): Promise<AuditLog> {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const file = path.join(dataDir, 'audit.jsonl');
    return new AuditLog(file, createWriteStream(file, { flags: 'a', mode: 0o600 }), log);
  }

  record(entry: AuditRecord): void {
    const line = { time: new Date().toISOString(), ...entry };
    if (!entry.allowed) this.#log.warn({ audit: line }, 'capability denied');
    if (this.#failed) {
      this.#log.info({ audit: line }, 'audit');
      return;
    }
    this.#stream.write(`${JSON.stringify(line)}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => { this.#stream.end(() => { resolve(); }); });
  }
}
