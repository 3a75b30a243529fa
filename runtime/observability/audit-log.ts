import { createWriteStream, openSync, renameSync, statSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { AuditRecord, AuditSink } from '../../sandbox/audit.ts';
import type { Logger } from './logger.ts';

export interface AuditLogOptions {
  /** Past this size the file is rotated (audit.jsonl -> audit.1.jsonl -> ...). @defaultValue 64 MiB */
  maxFileBytes?: number;
  /** Rotated files kept besides the current one; older ones are overwritten. @defaultValue 4 */
  keepFiles?: number;
  /** Denials logged as warnings per minute; beyond, one summary line says how many were not. @defaultValue 60 */
  deniedWarningsPerMinute?: number;
  /** The clock, for tests (the end-of-minute timer still runs on real time). */
  now?: () => number;
}

const MINUTE_MS = 60_000;

/**
 * The sandbox's AuditSink, implemented as an append-only JSON-lines file in the data folder (one
 * record per capability use or denial, with a timestamp). Denials also go to the service log as
 * warnings, so an operator watching logs sees a tool probing beyond its grant.
 *
 * A tool may make thousands of capability calls (each one audited), so both outlets are bounded:
 * the file rotates by size and keeps a fixed number of old files, and denial warnings are limited
 * per minute (the file still has every record). A hostile tool cannot fill the disk or the log.
 */
export class AuditLog implements AuditSink {
  readonly file: string;
  #stream: WriteStream;
  readonly #log: Logger;
  readonly #maxFileBytes: number;
  readonly #keepFiles: number;
  readonly #warningsPerMinute: number;
  readonly #now: () => number;
  #bytes: number;
  #failed = false;
  #windowStart = Number.NEGATIVE_INFINITY;
  #warned = 0;
  #suppressed = 0;
  #flushTimer: NodeJS.Timeout | undefined;

  private constructor(file: string, log: Logger, options: AuditLogOptions) {
    this.file = file;
    this.#log = log;
    this.#maxFileBytes = options.maxFileBytes ?? 64 * 1024 * 1024;
    this.#keepFiles = options.keepFiles ?? 4;
    this.#warningsPerMinute = options.deniedWarningsPerMinute ?? 60;
    this.#now = options.now ?? Date.now;
    this.#bytes = sizeOf(file);
    this.#stream = this.#open();
  }

  static async open(dataDir: string, log: Logger, options: AuditLogOptions = {}): Promise<AuditLog> {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    return new AuditLog(path.join(dataDir, 'audit.jsonl'), log, options);
  }

  record(entry: AuditRecord): void {
    const line = { time: new Date(this.#now()).toISOString(), ...entry };
    if (!entry.allowed) this.#warnDenied(line);
    if (this.#failed) {
      this.#log.info({ audit: line }, 'audit');
      return;
    }
    const text = `${JSON.stringify(line)}\n`;
    const bytes = Buffer.byteLength(text);
    if (this.#bytes > 0 && this.#bytes + bytes > this.#maxFileBytes) this.#rotate();
    this.#bytes += bytes;
    this.#stream.write(text);
  }

  close(): Promise<void> {
    this.#flushSuppressed();
    return new Promise((resolve) => { this.#stream.end(() => { resolve(); }); });
  }

  #open(): WriteStream {
    // Opened here, not by the stream (which opens later): a rotation right after must find the file.
    let stream: WriteStream;
    try {
      stream = createWriteStream(this.file, { fd: openSync(this.file, 'a', 0o600) });
    } catch {
      stream = createWriteStream(this.file, { flags: 'a', mode: 0o600 }); // reports the failure through 'error'
    }
    stream.on('error', (error) => {
      // Keep serving; say it once, loudly.
      if (!this.#failed) this.#log.error({ err: error, file: this.file }, 'audit log write failed; records are going to the service log only');
      this.#failed = true;
    });
    return stream;
  }

  /**
   * audit.jsonl becomes audit.1.jsonl (the older ones move up, the oldest kept is overwritten) and
   * a new audit.jsonl starts. Renaming leaves the old stream's open file in place, so what it still
   * has buffered lands in audit.1.jsonl.
   */
  #rotate(): void {
    const old = this.#stream;
    try {
      for (let index = this.#keepFiles - 1; index >= 1; index--) renameIfPresent(this.#rotated(index), this.#rotated(index + 1));
      if (this.#keepFiles >= 1) renameSync(this.file, this.#rotated(1));
    } catch (error) {
      this.#log.error({ err: error, file: this.file }, 'audit log rotation failed; continuing in the same file');
      return;
    }
    old.end();
    this.#bytes = 0;
    this.#stream = this.#open();
  }

  #rotated(index: number): string {
    return this.file.replace(/\.jsonl$/, `.${index}.jsonl`);
  }

  #warnDenied(line: Record<string, unknown>): void {
    const now = this.#now();
    if (now - this.#windowStart >= MINUTE_MS) {
      this.#flushSuppressed();
      this.#windowStart = now;
      this.#warned = 0;
    }
    if (this.#warned < this.#warningsPerMinute) {
      this.#warned++;
      this.#log.warn({ audit: line }, 'capability denied');
    } else {
      // The count goes out when the minute ends, even if no denial follows to open the next one.
      if (this.#suppressed === 0) this.#flushTimer = setTimeout(() => { this.#flushSuppressed(); }, this.#windowStart + MINUTE_MS - now).unref();
      this.#suppressed++;
    }
  }

  #flushSuppressed(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#suppressed === 0) return;
    this.#log.warn({ suppressed: this.#suppressed, file: this.file }, `${this.#suppressed} more capability denials were not logged here; the audit file has every one`);
    this.#suppressed = 0;
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function renameIfPresent(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
