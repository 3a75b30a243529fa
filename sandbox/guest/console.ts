/** console, formatted as Deno does (printf-style %s %d %i %f %o %O %j %c %%, inspect for the rest), sent through the sync `log` op. */
import type { SyncOps } from '../protocol.ts';
import { hostCall } from './bridge.ts';
import { inspect } from './inspect.ts';
import {
  ArrayPrototypeJoin, DateNow, JSONStringify, MapPrototypeDelete, MapPrototypeGet, MapPrototypeSet, NumberIsNaN,
  ObjectCreate, ObjectDefineProperty, SafeMap, StringPrototypeCharCodeAt, StringPrototypeSlice, SymbolToStringTag,
  push, BigIntPrototypeToString, StringPrototypeIndexOf, toDOMString,
} from './primordials.ts';

type Level = SyncOps['log']['args']['level'];

function toInteger(arg: unknown): string {
  if (typeof arg === 'bigint') return `${BigIntPrototypeToString(arg)}n`;
  if (typeof arg === 'symbol') return 'NaN';
  const n = parseInt(toDOMString(arg), 10);
  return NumberIsNaN(n) ? 'NaN' : toDOMString(n);
}

function toFloat(arg: unknown): string {
  if (typeof arg === 'symbol') return 'NaN';
  return `${parseFloat(toDOMString(arg))}`;
}

function formatArg(arg: unknown): string {
  return typeof arg === 'string' ? arg : inspect(arg);
}

/** The Console standard's Formatter, with Node/Deno's extra %j and %i. */
export function formatLogArgs(args: readonly unknown[]): string {
  if (args.length === 0) return '';
  const first = args[0];
  let next = 1;
  let output = '';
  if (typeof first === 'string' && StringPrototypeIndexOf(first, '%') !== -1) {
    let last = 0;
    for (let i = 0; i < first.length - 1; i++) {
      if (StringPrototypeCharCodeAt(first, i) !== 0x25) continue;
      const spec = first[i + 1] as string;
      if (spec === '%') {
        output += StringPrototypeSlice(first, last, i) + '%';
        last = i + 2;
        i++;
        continue;
      }
      if (next >= args.length) continue;
      let piece: string | null;
      const arg = args[next];
      switch (spec) {
        case 's':
          piece = typeof arg === 'bigint' ? BigIntPrototypeToString(arg) : typeof arg === 'object' && arg !== null ? inspect(arg, { depth: 1 }) : typeof arg === 'symbol' ? inspect(arg) : toDOMString(arg);
          break;
        case 'd': case 'i': piece = toInteger(arg); break;
        case 'f': piece = toFloat(arg); break;
        case 'o': case 'O': piece = inspect(arg); break;
        case 'j': {
          try {
            piece = JSONStringify(arg) ?? 'undefined';
          } catch {
            piece = '[Circular]';
          }
          break;
        }
        case 'c': piece = ''; break;
        default: piece = null;
      }
      if (piece === null) continue;
      output += StringPrototypeSlice(first, last, i) + piece;
      last = i + 2;
      i++;
      next++;
    }
    output += StringPrototypeSlice(first, last);
  } else {
    output = formatArg(first);
  }
  for (let i = next; i < args.length; i++) output += ' ' + formatArg(args[i]);
  return output;
}

let groupIndent = '';

function emit(level: Level, text: string): void {
  let indented = text;
  if (groupIndent !== '') {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const newline = StringPrototypeIndexOf(text, '\n', start);
      push(lines, groupIndent + StringPrototypeSlice(text, start, newline === -1 ? text.length : newline));
      if (newline === -1) break;
      start = newline + 1;
    }
    indented = ArrayPrototypeJoin(lines, '\n');
  }
  hostCall('log', { level, text: indented });
}

const counts = new SafeMap<string, number>();
const timers = new SafeMap<string, number>();

export function createConsole(): Console {
  const console = ObjectCreate(null) as Record<string, unknown>;
  const method = (name: string, fn: (...args: unknown[]) => void): void => {
    ObjectDefineProperty(fn, 'name', { value: name });
    ObjectDefineProperty(console, name, { value: fn, writable: true, enumerable: true, configurable: true });
  };
  method('log', function log(...args: unknown[]) { emit('info', formatLogArgs(args)); });
  method('info', function info(...args: unknown[]) { emit('info', formatLogArgs(args)); });
  method('debug', function debug(...args: unknown[]) { emit('debug', formatLogArgs(args)); });
  method('warn', function warn(...args: unknown[]) { emit('warn', formatLogArgs(args)); });
  method('error', function error(...args: unknown[]) { emit('error', formatLogArgs(args)); });
  method('trace', function trace(...args: unknown[]) {
    const stack = new Error().stack ?? '';
    const at = StringPrototypeIndexOf(stack, '\n');
    emit('error', `Trace${args.length > 0 ? ': ' + formatLogArgs(args) : ''}${at === -1 ? '' : StringPrototypeSlice(stack, at)}`);
  });
  method('dir', function dir(value?: unknown) { emit('info', inspect(value)); });
  method('dirxml', function dirxml(...args: unknown[]) { emit('info', formatLogArgs(args)); });
  method('table', function table(...args: unknown[]) { emit('info', formatLogArgs(args)); });
  method('assert', function assert(condition?: unknown, ...args: unknown[]) {
    if (condition) return;
    const rest = args;
    if (rest.length === 0) emit('error', 'Assertion failed');
    else if (typeof rest[0] === 'string') { rest[0] = `Assertion failed: ${rest[0]}`; emit('error', formatLogArgs(rest)); }
    else emit('error', 'Assertion failed: ' + formatLogArgs(rest));
  });
  method('count', function count(label: unknown = 'default') {
    const key = toDOMString(label);
    const value = (MapPrototypeGet(counts, key) ?? 0) + 1;
    MapPrototypeSet(counts, key, value);
    emit('info', `${key}: ${value}`);
  });
  method('countReset', function countReset(label: unknown = 'default') {
    MapPrototypeDelete(counts, toDOMString(label));
  });
  method('time', function time(label: unknown = 'default') {
    const key = toDOMString(label);
    if (MapPrototypeGet(timers, key) !== undefined) {
      emit('warn', `Timer '${key}' already exists`);
      return;
    }
    MapPrototypeSet(timers, key, DateNow());
  });
  const elapsed = (label: unknown, remove: boolean, extra: unknown[]): void => {
    const key = toDOMString(label);
    const started = MapPrototypeGet(timers, key);
    if (started === undefined) {
      emit('warn', `Timer '${key}' does not exist`);
      return;
    }
    if (remove) MapPrototypeDelete(timers, key);
    const suffix = extra.length > 0 ? ' ' + formatLogArgs(extra) : '';
    emit('info', `${key}: ${DateNow() - started}ms${suffix}`);
  };
  method('timeLog', function timeLog(label: unknown = 'default', ...extra: unknown[]) { elapsed(label, false, extra); });
  method('timeEnd', function timeEnd(label: unknown = 'default') { elapsed(label, true, []); });
  method('group', function group(...args: unknown[]) {
    if (args.length > 0) emit('info', formatLogArgs(args));
    groupIndent += '  ';
  });
  method('groupCollapsed', function groupCollapsed(...args: unknown[]) {
    if (args.length > 0) emit('info', formatLogArgs(args));
    groupIndent += '  ';
  });
  method('groupEnd', function groupEnd() {
    groupIndent = StringPrototypeSlice(groupIndent, 0, groupIndent.length - 2);
  });
  method('clear', function clear() { /* there is no terminal to clear */ });
  ObjectDefineProperty(console, SymbolToStringTag, { value: 'console', configurable: true });
  return console as unknown as Console;
}

/** The console type as tools see it (the guest has no DOM lib to borrow it from). */
export interface Console {
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  debug(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}
