/**
 * console, formatted as Deno does (printf-style %s %d %i %f %o %O %j %c %%, inspect for the rest,
 * console.table's box drawing), sent through the sync `log` op.
 */
import type { SyncOps } from '../protocol.ts';
import { hostCall } from './bridge.ts';
import { inspect, quoteString } from './inspect.ts';
import {
  ArrayIsArray, ArrayPrototypeJoin, DateNow, ErrorCtor, JSONStringify, MapPrototypeDelete, MapPrototypeForEach,
  MapPrototypeGet, MapPrototypeGetSize, MapPrototypeSet, MathMax, NumberIsInteger, NumberIsNaN, ObjectCreate,
  ObjectDefineProperty, ObjectHasOwn, ObjectKeys, ReflectApply, ReflectHas, RegExpPrototypeExec, SafeMap,
  SetPrototypeForEach, SetPrototypeGetSize, StringPrototypeCharCodeAt, StringPrototypeCodePointAt,
  StringPrototypeNormalize, StringPrototypeRepeat, StringPrototypeSlice, SymbolIterator, SymbolToStringTag, push,
  BigIntPrototypeToString, StringPrototypeIndexOf, SymbolPrototypeToString, toDOMString, toNumber,
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
  // As in Deno, a lone string is printed as it is: console.log("100%%") shows both percent signs.
  if (typeof first === 'string' && args.length > 1 && StringPrototypeIndexOf(first, '%') !== -1) {
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
          piece = typeof arg === 'bigint' ? BigIntPrototypeToString(arg) : typeof arg === 'object' && arg !== null ? inspect(arg, { depth: 1 }) : typeof arg === 'symbol' ? SymbolPrototypeToString(arg) : toDOMString(arg);
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
  method('table', function table(data?: unknown, properties?: unknown) {
    if (properties !== undefined && !ArrayIsArray(properties)) {
      throw new ErrorCtor(`The 'properties' argument must be of type Array: received type ${typeof properties}`);
    }
    emit('info', data === null || typeof data !== 'object' ? formatLogArgs([data]) : renderTable(data, properties));
  });
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

/** A table cell as Deno shows it: a string quoted (cut after 10,000 characters), anything else inspected one level deep on one line. */
function tableCell(value: unknown): string {
  if (typeof value === 'string') return quoteString(value.length > 10_000 ? StringPrototypeSlice(value, 0, 10_000) + '...' : value);
  return inspect(value, { depth: 1, compact: true, breakLength: Infinity });
}

// Brand checks through the captured size getters, which throw for anything but a real Set or Map.
function isSet(value: object): value is Set<unknown> {
  try {
    SetPrototypeGetSize(value as Set<unknown>);
    return true;
  } catch {
    return false;
  }
}

function isMap(value: object): value is Map<unknown, unknown> {
  try {
    MapPrototypeGetSize(value as Map<unknown, unknown>);
    return true;
  } catch {
    return false;
  }
}

/** Array.from over an iterable, without the patchable Array.from. */
function iterableToArray(value: object, method: unknown): unknown[] {
  const iterator: unknown = ReflectApply(method as () => unknown, value, []);
  const next: unknown = (iterator as { next: unknown }).next;
  const items: unknown[] = [];
  for (;;) {
    const step = ReflectApply(next as () => unknown, iterator, []) as { done: unknown; value: unknown };
    if (step.done) return items;
    push(items, step.value);
  }
}

function blankColumn(rows: number): string[] {
  const column: string[] = [];
  for (let i = 0; i < rows; i++) push(column, '');
  return column;
}

/**
 * console.table's layout, as Deno lays it out (a fork of Node's): an index column ("(iter idx)"
 * for a Set, a Map or another iterable), a column per key of the rows (or per requested
 * property), and "Values" for rows that are primitives.
 */
function renderTable(data: object, properties: readonly unknown[] | undefined): string {
  const set = isSet(data);
  const map = !set && isMap(data);
  const iteratorMethod: unknown = set || map || ArrayIsArray(data) ? undefined : (data as Record<symbol, unknown>)[SymbolIterator];
  const iterable = typeof iteratorMethod === 'function';
  let rows: Record<string, unknown>;
  if (set) {
    const items: unknown[] = [];
    SetPrototypeForEach(data, (item) => { push(items, item); });
    rows = items as unknown as Record<string, unknown>;
  } else if (map) {
    rows = ObjectCreate(null) as Record<string, unknown>;
    let index = 0;
    MapPrototypeForEach(data, (value, key) => { (rows as Record<number, unknown>)[index++] = { Key: key, Values: value }; });
  } else if (iterable) {
    rows = iterableToArray(data, iteratorMethod) as unknown as Record<string, unknown>;
  } else {
    rows = data as Record<string, unknown>;
  }
  const keys = ObjectKeys(rows);
  const rowCount = keys.length;
  // Keyed by the rows' own keys, so no prototype: a "constructor" or "__proto__" key is just a column.
  const columns = ObjectCreate(null) as Record<PropertyKey, string[]>;
  if (properties !== undefined) {
    for (let i = 0; i < properties.length; i++) columns[properties[i] as PropertyKey] = blankColumn(rowCount);
  }
  const indexColumn: string[] = [];
  const valuesColumn: string[] = [];
  let hasPrimitives = false;
  for (let index = 0; index < rowCount; index++) {
    const key = keys[index] as string;
    const value = rows[key];
    const primitive = value === null || (typeof value !== 'function' && typeof value !== 'object');
    if (properties === undefined && primitive) {
      hasPrimitives = true;
      push(valuesColumn, tableCell(value));
    } else {
      if (!primitive) {
        const row = value as Record<PropertyKey, unknown>;
        const rowKeys: readonly unknown[] = properties ?? ObjectKeys(row);
        for (let i = 0; i < rowKeys.length; i++) {
          const column = rowKeys[i] as PropertyKey;
          if (!ReflectHas(row, column)) continue;
          if (!ReflectHas(columns, column)) columns[column] = blankColumn(rowCount);
          (columns[column] as string[])[index] = tableCell(row[column]);
        }
      }
      push(valuesColumn, '');
    }
    push(indexColumn, key);
  }
  const columnKeys = ObjectKeys(columns);
  const header: unknown[] = [set || map || iterable ? '(iter idx)' : '(idx)'];
  const body: string[][] = [indexColumn];
  for (let i = 0; i < columnKeys.length; i++) push(body, columns[columnKeys[i] as string] as string[]);
  push(body, valuesColumn);
  // Deno drops falsy header names (an empty or 0 property) without dropping their column.
  const named: readonly unknown[] = properties ?? columnKeys;
  for (let i = 0; i < named.length; i++) if (named[i]) push(header, named[i]);
  if (properties === undefined && !map && hasPrimitives) push(header, 'Values');
  return drawTable(header, body);
}

// ansi-regex's pattern, as Deno strips escape sequences before measuring a cell.
// eslint-disable-next-line no-control-regex -- the sequences start with ESC (or CSI) and may end with BEL
const TABLE_ANSI = /[\u001B\u009B][[\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?\u0007)|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-ntqry=><~]))/g;

function isFullWidth(code: number): boolean {
  return code >= 0x1100 && (
    code <= 0x115f || code === 0x2329 || code === 0x232a ||
    (code >= 0x2e80 && code <= 0x3247 && code !== 0x303f) || (code >= 0x3250 && code <= 0x4dbf) ||
    (code >= 0x4e00 && code <= 0xa4c6) || (code >= 0xa960 && code <= 0xa97c) || (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) || (code >= 0xfe10 && code <= 0xfe19) || (code >= 0xfe30 && code <= 0xfe6b) ||
    (code >= 0xff01 && code <= 0xff60) || (code >= 0xffe0 && code <= 0xffe6) || (code >= 0x1b000 && code <= 0x1b001) ||
    (code >= 0x1f200 && code <= 0x1f251) || (code >= 0x1f300 && code <= 0x1f64f) || (code >= 0x20000 && code <= 0x3fffd)
  );
}

function isZeroWidth(code: number): boolean {
  return code <= 0x1f || (code >= 0x7f && code <= 0x9f) || (code >= 0x300 && code <= 0x36f) ||
    (code >= 0x200b && code <= 0x200f) || (code >= 0x20d0 && code <= 0x20ff) || (code >= 0xfe00 && code <= 0xfe0f) ||
    (code >= 0xfe20 && code <= 0xfe2f) || (code >= 0xe0100 && code <= 0xe01ef);
}

/** Terminal columns, as Deno counts them for console.table: escape sequences removed, NFC, East Asian wide = 2, controls and combining marks = 0. */
function displayWidth(value: unknown): number {
  const text = toDOMString(value);
  let plain = '';
  let last = 0;
  TABLE_ANSI.lastIndex = 0;
  for (;;) {
    const match = RegExpPrototypeExec(TABLE_ANSI, text);
    if (match === null) break;
    plain += StringPrototypeSlice(text, last, match.index);
    last = match.index + match[0].length;
  }
  plain = StringPrototypeNormalize(plain + StringPrototypeSlice(text, last), 'NFC');
  let width = 0;
  for (let i = 0; i < plain.length; i++) {
    const code = StringPrototypeCodePointAt(plain, i) as number;
    if (code > 0xffff) i++;
    if (isFullWidth(code)) width += 2;
    else if (!isZeroWidth(code)) width++;
  }
  return width;
}

function tableRow(cells: readonly unknown[], widths: readonly number[], rightAlign: readonly boolean[] | null): string {
  let out = '│ ';
  for (let i = 0; i < cells.length; i++) {
    const cell = toDOMString(cells[i]);
    const padding = StringPrototypeRepeat(' ', (widths[i] as number) - displayWidth(cell));
    out += rightAlign?.[i] === true ? padding + cell : cell + padding;
    if (i !== cells.length - 1) out += ' │ ';
  }
  return out + ' │';
}

/** Node's cli_table as Deno forked it: columns as wide as their widest cell, right-aligned when every cell reads as an integer. */
function drawTable(header: readonly unknown[], body: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  const rightAlign: boolean[] = [];
  for (let i = 0; i < header.length; i++) {
    push(widths, displayWidth(header[i]));
    push(rightAlign, true);
  }
  let rowCount = 0;
  for (let i = 0; i < body.length; i++) rowCount = MathMax(rowCount, (body[i] as readonly string[]).length);
  const rows: string[][] = [];
  for (let j = 0; j < rowCount; j++) push(rows, []);
  for (let i = 0; i < header.length; i++) {
    const column = body[i];
    for (let j = 0; j < rowCount; j++) {
      const cell = column !== undefined && ObjectHasOwn(column, j) ? (column[j] as string) : '';
      push(rows[j] as string[], cell);
      widths[i] = MathMax(widths[i] as number, displayWidth(cell));
      if (!NumberIsInteger(toNumber(cell))) rightAlign[i] = false;
    }
  }
  const dividers: string[] = [];
  for (let i = 0; i < widths.length; i++) push(dividers, StringPrototypeRepeat('─', (widths[i] as number) + 2));
  let out = `┌${ArrayPrototypeJoin(dividers, '┬')}┐\n${tableRow(header, widths, null)}\n├${ArrayPrototypeJoin(dividers, '┼')}┤\n`;
  for (let j = 0; j < rowCount; j++) out += `${tableRow(rows[j] as string[], widths, rightAlign)}\n`;
  return `${out}└${ArrayPrototypeJoin(dividers, '┴')}┘`;
}

/** The console type as tools see it (the guest has no DOM lib to borrow it from). */
export interface Console {
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  debug(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}
