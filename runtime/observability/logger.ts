import { pino } from 'pino';
import type { DestinationStream, Logger, LevelWithSilent } from 'pino';

export type { Logger };

/**
 * Paths pino blanks out wherever they appear in a log record. Keys and secrets must never reach a
 * log line, whichever object carried them there.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'apiKey',
  '*.apiKey',
  'key',
  '*.key',
  'secret',
  '*.secret',
  'secrets',
  '*.secrets',
  'password',
  '*.password',
  'token',
  '*.token',
];

/** JSON lines on stdout (or the given stream): one record per event, with the secrets above censored. */
export function createLogger(level: LevelWithSilent, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'paddock' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
