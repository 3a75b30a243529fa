/**
 * A port of the core of Node's util.inspect as Deno's console uses it (depth 4, compact 3,
 * break length 80, double-quoted strings, grouped number arrays), on primordials. It reads
 * properties through descriptors, so inspecting an object never runs the object's getters.
 */
import { customInspect } from './inspect-hook.ts';
import {
  ArrayBufferIsView, ArrayBufferPrototypeGetByteLength, ArrayIsArray, ArrayPrototypeJoin, BigIntPrototypeToString,
  BooleanPrototypeValueOf, DatePrototypeGetTime, DatePrototypeToISOString, FunctionPrototypeToString,
  MapPrototypeForEach, MapPrototypeGetSize, MathFloor, MathMax, MathMin, NumberIsNaN, NumberPrototypeToString,
  NumberPrototypeValueOf, ObjectGetOwnPropertyNames, ObjectGetOwnPropertySymbols, ObjectGetPrototypeOf, ObjectIs,
  ObjectKeys, ObjectPrototypePropertyIsEnumerable, ObjectPrototypeToString, ReflectApply,
  ReflectGetOwnPropertyDescriptor, RegExpPrototypeExec, RegExpPrototypeGetFlags, RegExpPrototypeGetSource,
  RegExpPrototypeTest, SetPrototypeForEach, SetPrototypeGetSize, StringPrototypeCharCodeAt, StringPrototypeIncludes,
  StringPrototypePadStart, StringPrototypeRepeat, StringPrototypeSlice, StringPrototypeStartsWith,
  StringPrototypeValueOf, SymbolPrototypeToString, TypedArrayPrototypeGetLength,
  TypedArrayPrototypeGetSymbolToStringTag, push, StringPrototypeIndexOf, ErrorCtor, SafeMap, MapPrototypeGet,
  MapPrototypeSet, toDOMString, SymbolPrototypeValueOf, BigIntPrototypeValueOf, SymbolPrototypeGetDescription,
} from './primordials.ts';

export interface InspectOptions {
  depth: number;
  breakLength: number;
  /** A number: how many inner levels may share a line (Deno's console uses 3). `true`: Node's older mode that console.table's cells use (no array grouping, base after the brace). */
  compact: number | true;
  maxArrayLength: number;
  maxStringLength: number;
}

const DEFAULT_OPTIONS: InspectOptions = { depth: 4, breakLength: 80, compact: 3, maxArrayLength: 100, maxStringLength: 10_000 };

interface Context extends InspectOptions {
  seen: unknown[];
  circular: Map<unknown, number>;
  indentationLvl: number;
  currentDepth: number;
}

const IDENTIFIER = /^[a-zA-Z_][a-zA-Z_0-9]*$/;
const ARRAY_INDEX = /^(0|[1-9]\d*)$/;
const MathSqrt = Math.sqrt;
const MathRound = Math.round;

function filterKeys(keys: (string | symbol)[], keep: (key: string | symbol) => boolean): (string | symbol)[] {
  const kept: (string | symbol)[] = [];
  for (let i = 0; i < keys.length; i++) if (keep(keys[i] as string | symbol)) push(kept, keys[i] as string | symbol);
  return kept;
}

export function inspect(value: unknown, options: Partial<InspectOptions> = {}): string {
  const ctx: Context = {
    depth: options.depth ?? DEFAULT_OPTIONS.depth,
    breakLength: options.breakLength ?? DEFAULT_OPTIONS.breakLength,
    compact: options.compact ?? DEFAULT_OPTIONS.compact,
    maxArrayLength: options.maxArrayLength ?? DEFAULT_OPTIONS.maxArrayLength,
    maxStringLength: options.maxStringLength ?? DEFAULT_OPTIONS.maxStringLength,
    seen: [],
    circular: new SafeMap<unknown, number>(),
    indentationLvl: 0,
    currentDepth: 0,
  };
  return formatValue(ctx, value, 0);
}

function escapeControl(text: string): string {
  let output = '';
  for (let i = 0; i < text.length; i++) {
    const c = StringPrototypeCharCodeAt(text, i);
    switch (c) {
      case 0x08: output += '\\b'; break;
      case 0x0c: output += '\\f'; break;
      case 0x0a: output += '\\n'; break;
      case 0x0d: output += '\\r'; break;
      case 0x09: output += '\\t'; break;
      case 0x0b: output += '\\v'; break;
      default:
        output += c < 0x20 || (c >= 0x7f && c <= 0x9f)
          ? '\\x' + StringPrototypePadStart(NumberPrototypeToString(c, 16), 2, '0')
          : (text[i] as string);
    }
  }
  return output;
}

/** Deno's quoting: the first of " ' ` that the string does not contain (even with a `${` in it), with escapes. */
export function quoteString(text: string): string {
  let quote = '"';
  if (StringPrototypeIncludes(text, '"')) {
    if (!StringPrototypeIncludes(text, "'")) quote = "'";
    else if (!StringPrototypeIncludes(text, '`')) quote = '`';
  }
  let escaped = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    escaped += ch === quote || ch === '\\' ? '\\' + ch : ch;
  }
  return quote + escapeControl(escaped) + quote;
}

function formatNumber(value: number): string {
  return ObjectIs(value, -0) ? '-0' : toDOMString(value);
}

function formatPrimitive(ctx: Context, value: unknown): string {
  switch (typeof value) {
    case 'string': {
      const trimmed = value.length > ctx.maxStringLength ? StringPrototypeSlice(value, 0, ctx.maxStringLength) : value;
      const rest = value.length - trimmed.length;
      return quoteString(trimmed) + (rest > 0 ? `... ${rest} more character${rest > 1 ? 's' : ''}` : '');
    }
    case 'number': return formatNumber(value);
    case 'bigint': return `${BigIntPrototypeToString(value)}n`;
    case 'boolean': return value ? 'true' : 'false';
    case 'undefined': return 'undefined';
    case 'symbol': return formatSymbol(value);
    default: return 'null';
  }
}

const PLAIN_SYMBOL_DESCRIPTION = /^[a-zA-Z_][a-zA-Z_.0-9]*$/;

/** Deno quotes a symbol's description unless it reads as a (dotted) name: Symbol(a.b) but Symbol("a b"). */
function formatSymbol(value: symbol): string {
  const description = SymbolPrototypeGetDescription(value);
  if (description === undefined || RegExpPrototypeTest(PLAIN_SYMBOL_DESCRIPTION, description)) return SymbolPrototypeToString(value);
  return `Symbol(${quoteString(description)})`;
}

function formatKey(key: string | symbol): string {
  if (typeof key === 'symbol') return SymbolPrototypeToString(key); // Deno prints symbol keys without brackets
  return RegExpPrototypeTest(IDENTIFIER, key) ? key : quoteString(key);
}

function constructorName(value: object): string | null {
  let proto: unknown = value;
  while (proto !== null && proto !== undefined) {
    const descriptor = ReflectGetOwnPropertyDescriptor(proto, 'constructor');
    const ctor: unknown = descriptor?.value;
    if (typeof ctor === 'function') {
      const nameDescriptor = ReflectGetOwnPropertyDescriptor(ctor, 'name');
      const name: unknown = nameDescriptor?.value;
      if (typeof name === 'string' && name !== '') return name;
    }
    proto = ObjectGetPrototypeOf(proto);
  }
  return null;
}

function getPrefix(name: string | null, tag: string, fallback: string, size?: string): string {
  const sizeText = size ?? '';
  if (name === null) {
    if (tag !== '' && fallback !== tag) return `[${fallback}${sizeText}: null prototype] [${tag}] `;
    return `[${fallback}${sizeText}: null prototype] `;
  }
  if (tag !== '' && name !== tag) return `${name}${sizeText} [${tag}] `;
  return `${name}${sizeText} `;
}

function functionBase(value: (...args: never[]) => unknown, name: string | null): string {
  const source = FunctionPrototypeToString(value);
  const nameDescriptor = ReflectGetOwnPropertyDescriptor(value, 'name');
  const fnName = typeof nameDescriptor?.value === 'string' ? (nameDescriptor.value) : '';
  if (RegExpPrototypeTest(/^class\b/, source)) {
    return `[class ${fnName === '' ? '(anonymous)' : fnName}]`;
  }
  let type = 'Function';
  const tag = ObjectPrototypeToString(value);
  if (tag === '[object AsyncFunction]') type = 'AsyncFunction';
  else if (tag === '[object GeneratorFunction]') type = 'GeneratorFunction';
  else if (tag === '[object AsyncGeneratorFunction]') type = 'AsyncGeneratorFunction';
  let base = `[${type}`;
  if (name === null) base += ' (null prototype)';
  base += fnName === '' ? ' (anonymous)' : `: ${fnName}`;
  base += ']';
  return base;
}

function formatError(value: Error, indentationLvl: number): string {
  let stack: unknown;
  let name: unknown;
  let message: unknown;
  try {
    stack = value.stack;
    name = value.name;
    message = value.message;
  } catch {
    name = 'Error';
  }
  const header = `${typeof name === 'string' ? name : 'Error'}${typeof message === 'string' && message !== '' ? `: ${message}` : ''}`;
  if (typeof stack === 'string' && stack !== '') {
    // V8's stack starts with the header computed at construction; prefer the current name/message.
    const newline = StringPrototypeIndexOf(stack, '\n    at ');
    if (newline !== -1) return indentLines(header + StringPrototypeSlice(stack, newline), indentationLvl);
  }
  // Without a stack, brackets set the error apart from the text around it (as Node and Deno do).
  return indentLines(`[${header}]`, indentationLvl);
}

function indentLines(text: string, indentationLvl: number): string {
  if (indentationLvl === 0) return text;
  const indentation = StringPrototypeRepeat(' ', indentationLvl);
  let output = '';
  let start = 0;
  for (;;) {
    const newline = StringPrototypeIndexOf(text, '\n', start);
    if (newline === -1) return output + StringPrototypeSlice(text, start);
    output += StringPrototypeSlice(text, start, newline + 1) + indentation;
    start = newline + 1;
  }
}

function formatValue(ctx: Context, value: unknown, recurseTimes: number): string {
  if (typeof value !== 'object' && typeof value !== 'function') return formatPrimitive(ctx, value);
  if (value === null) return 'null';

  const custom: unknown = (() => {
    try {
      return (value as Record<symbol, unknown>)[customInspect];
    } catch {
      return undefined;
    }
  })();
  if (typeof custom === 'function' && recurseTimes <= ctx.depth) {
    const nested = (inner: unknown): string => {
      const saved = ctx.indentationLvl;
      const result = formatValue(ctx, inner, recurseTimes + 1);
      ctx.indentationLvl = saved;
      return result;
    };
    const result: unknown = ReflectApply(custom, value, [nested, { depth: ctx.depth - recurseTimes, breakLength: ctx.breakLength }]);
    if (typeof result === 'string') return result;
    if (result !== value) return formatValue(ctx, result, recurseTimes);
  }

  for (let i = 0; i < ctx.seen.length; i++) {
    if (ctx.seen[i] === value) {
      let index = MapPrototypeGet(ctx.circular, value);
      if (index === undefined) {
        index = MapPrototypeGetSize(ctx.circular) + 1;
        MapPrototypeSet(ctx.circular, value, index);
      }
      return `[Circular *${index}]`;
    }
  }
  return formatRaw(ctx, value, recurseTimes);
}

const kObjectType = 0;
const kArrayExtrasType = 1;

function formatRaw(ctx: Context, value: object, recurseTimes: number): string {
  const name = constructorName(value);
  const tagDescriptor = (() => {
    try {
      return (value as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag];
    } catch {
      return undefined;
    }
  })();
  let tag = typeof tagDescriptor === 'string' ? tagDescriptor : '';
  if (tag !== '' && name !== null && tag === name) tag = '';

  let keys: (string | symbol)[] = ownKeys(value, false);
  let base = '';
  let braces: [string, string] = ['{', '}'];
  let extrasType = kObjectType;
  let formatter: (ctx: Context, value: object, recurseTimes: number) => string[] = () => [];
  let noIterator = true;
  const objectTag = ObjectPrototypeToString(value);

  if (ArrayIsArray(value)) {
    noIterator = false;
    keys = ownKeys(value, true);
    const prefix = name !== 'Array' || tag !== '' ? getPrefix(name, tag, 'Array', `(${value.length})`) : '';
    braces = [`${prefix}[`, ']'];
    if (value.length === 0 && keys.length === 0) return `${braces[0]}]`;
    extrasType = kArrayExtrasType;
    formatter = formatArray as typeof formatter;
  } else if (objectTag === '[object Set]' && value instanceof Set) {
    noIterator = false;
    const size = SetPrototypeGetSize(value);
    const prefix = getPrefix(name, tag, 'Set', `(${size})`);
    formatter = formatSet as typeof formatter;
    if (size === 0 && keys.length === 0) return `${prefix}{}`;
    braces = [`${prefix}{`, '}'];
  } else if (objectTag === '[object Map]' && value instanceof Map) {
    noIterator = false;
    const size = MapPrototypeGetSize(value);
    const prefix = getPrefix(name, tag, 'Map', `(${size})`);
    formatter = formatMap as typeof formatter;
    if (size === 0 && keys.length === 0) return `${prefix}{}`;
    braces = [`${prefix}{`, '}'];
  } else if (ArrayBufferIsView(value) && TypedArrayPrototypeGetSymbolToStringTag(value) !== undefined) {
    noIterator = false;
    keys = ownKeys(value, true);
    const typedName = TypedArrayPrototypeGetSymbolToStringTag(value) as string;
    const length = TypedArrayPrototypeGetLength(value);
    const prefix = getPrefix(name, tag !== typedName ? tag : '', typedName, `(${length})`);
    braces = [`${prefix}[`, ']'];
    if (length === 0 && keys.length === 0) return `${braces[0]}]`;
    formatter = formatTypedArray as typeof formatter;
    extrasType = kArrayExtrasType;
  }
  if (noIterator) {
    if (objectTag === '[object Object]' && name === 'Object' && tag === '') {
      if (keys.length === 0) return '{}';
    } else if (typeof value === 'function') {
      base = functionBase(value as (...args: never[]) => unknown, name);
      if (keys.length === 0) return base;
    } else if (objectTag === '[object RegExp]') {
      base = `/${RegExpPrototypeGetSource(value as RegExp)}/${RegExpPrototypeGetFlags(value as RegExp)}`;
      if (keys.length === 0) return base;
    } else if (objectTag === '[object Date]') {
      const time = DatePrototypeGetTime(value);
      base = NumberIsNaN(time) ? 'Invalid Date' : DatePrototypeToISOString(value);
      if (keys.length === 0) return base;
    } else if (objectTag === '[object Error]' || value instanceof ErrorCtor) {
      base = formatError(value as Error, ctx.indentationLvl);
      keys = filterKeys(keys, (key) => key !== 'stack' && key !== 'message' && key !== 'cause');
      if (keys.length === 0) return base;
    } else if (objectTag === '[object ArrayBuffer]') {
      const length = ArrayBufferPrototypeGetByteLength(value as ArrayBuffer);
      const bytes = new Uint8Array(value as ArrayBuffer, 0, MathMin(length, 50));
      let hex = '';
      for (let i = 0; i < bytes.length; i++) hex += (i > 0 ? ' ' : '') + StringPrototypePadStart(NumberPrototypeToString(bytes[i], 16), 2, '0');
      if (length > 50) hex += ` ... ${length - 50} more byte${length - 50 > 1 ? 's' : ''}`;
      const prefix = getPrefix(name, tag, 'ArrayBuffer');
      return `${prefix}{ [Uint8Contents]: <${hex}>, byteLength: ${length} }`;
    } else if (objectTag === '[object Promise]') {
      return `${getPrefix(name, tag, 'Promise')}{ <unknown> }`;
    } else if (objectTag === '[object WeakMap]' || objectTag === '[object WeakSet]') {
      return `${getPrefix(name, tag, StringPrototypeSlice(objectTag, 8, -1))}{ <items unknown> }`;
    } else if (objectTag === '[object Number]') {
      base = `[Number: ${formatNumber(NumberPrototypeValueOf(value))}]`;
      if (keys.length === 0) return base;
    } else if (objectTag === '[object String]') {
      base = `[String: ${quoteString(StringPrototypeValueOf(value))}]`;
      keys = filterKeys(keys, (key) => typeof key !== 'string' || (!RegExpPrototypeTest(/^\d+$/, key) && key !== 'length'));
      if (keys.length === 0) return base;
    } else if (objectTag === '[object Boolean]') {
      base = `[Boolean: ${BooleanPrototypeValueOf(value) ? 'true' : 'false'}]`;
      if (keys.length === 0) return base;
    } else if (objectTag === '[object Symbol]' || objectTag === '[object BigInt]') {
      base = `[${StringPrototypeSlice(objectTag, 8, -1)}: ${formatPrimitive(ctx, objectTag === '[object Symbol]' ? SymbolPrototypeValueOf(value) : BigIntPrototypeValueOf(value))}]`;
      if (keys.length === 0) return base;
    } else {
      if (keys.length === 0) return `${getPrefix(name, tag, 'Object')}{}`;
      braces[0] = `${getPrefix(name, tag, 'Object')}{`;
    }
  }

  if (recurseTimes > ctx.depth) {
    const shown = name ?? (tag !== '' ? tag : 'Object');
    return ArrayIsArray(value) ? '[Array]' : `[${shown}]`;
  }

  recurseTimes += 1;
  push(ctx.seen, value);
  ctx.currentDepth = recurseTimes;
  let output: string[];
  try {
    output = formatter(ctx, value, recurseTimes);
    for (let i = 0; i < keys.length; i++) {
      push(output, formatProperty(ctx, value, recurseTimes, keys[i] as string | symbol, extrasType));
    }
  } finally {
    ctx.seen.length--;
  }
  const circularIndex = MapPrototypeGet(ctx.circular, value);
  if (circularIndex !== undefined) {
    const reference = `<ref *${circularIndex}>`;
    if (base === '' || ctx.compact === true) braces[0] = `${reference} ${braces[0]}`;
    else base = `${reference} ${base}`;
  }
  return reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value);
}

function ownKeys(value: object, arrayLike: boolean): (string | symbol)[] {
  const keys: (string | symbol)[] = [];
  const names = arrayLike ? ObjectGetOwnPropertyNames(value) : ObjectKeys(value);
  for (let i = 0; i < names.length; i++) {
    const key = names[i] as string;
    if (arrayLike) {
      if (RegExpPrototypeTest(ARRAY_INDEX, key) || key === 'length') continue;
      if (!ObjectPrototypePropertyIsEnumerable(value, key)) continue;
    }
    push(keys, key);
  }
  const symbols = ObjectGetOwnPropertySymbols(value);
  for (let i = 0; i < symbols.length; i++) {
    const symbol = symbols[i] as symbol;
    if (ObjectPrototypePropertyIsEnumerable(value, symbol)) push(keys, symbol);
  }
  return keys;
}

function formatProperty(ctx: Context, value: object, recurseTimes: number, key: string | symbol, type: number): string {
  const descriptor = ReflectGetOwnPropertyDescriptor(value, key) ?? { value: undefined, enumerable: true };
  let str: string;
  if (descriptor.value !== undefined || !('get' in descriptor || 'set' in descriptor)) {
    const diff = ctx.compact === true && type === kObjectType ? 3 : 2;
    ctx.indentationLvl += diff;
    str = formatValue(ctx, descriptor.value, recurseTimes);
    ctx.indentationLvl -= diff;
  } else if (descriptor.get !== undefined) {
    str = descriptor.set !== undefined ? '[Getter/Setter]' : '[Getter]';
  } else {
    str = descriptor.set !== undefined ? '[Setter]' : 'undefined';
  }
  if (type === kArrayExtrasType && typeof key === 'string' && RegExpPrototypeTest(ARRAY_INDEX, key)) return str;
  return `${formatKey(key)}: ${str}`;
}

function formatArray(ctx: Context, value: unknown[], recurseTimes: number): string[] {
  const length = value.length;
  const shown = MathMin(ctx.maxArrayLength, length);
  const output: string[] = [];
  let holes = 0;
  const flushHoles = (): void => {
    if (holes > 0) {
      push(output, `<${holes} empty item${holes > 1 ? 's' : ''}>`);
      holes = 0;
    }
  };
  let i = 0;
  for (; i < length && output.length < shown; i++) {
    const descriptor = ReflectGetOwnPropertyDescriptor(value, toDOMString(i));
    if (descriptor === undefined) {
      holes++;
      continue;
    }
    flushHoles();
    push(output, formatProperty(ctx, value, recurseTimes, toDOMString(i), kArrayExtrasType));
  }
  flushHoles();
  const remaining = length - i;
  if (remaining > 0) push(output, `... ${remaining} more item${remaining > 1 ? 's' : ''}`);
  return output;
}

function formatTypedArray(ctx: Context, value: ArrayBufferView, _recurseTimes: number): string[] {
  const length = TypedArrayPrototypeGetLength(value);
  const shown = MathMin(ctx.maxArrayLength, length);
  const output: string[] = [];
  const items = value as unknown as ArrayLike<number | bigint>;
  for (let i = 0; i < shown; i++) {
    const item = items[i];
    push(output, typeof item === 'bigint' ? `${BigIntPrototypeToString(item)}n` : formatNumber(item as number));
  }
  if (length > shown) push(output, `... ${length - shown} more item${length - shown > 1 ? 's' : ''}`);
  return output;
}

function formatSet(ctx: Context, value: Set<unknown>, recurseTimes: number): string[] {
  const output: string[] = [];
  ctx.indentationLvl += 2;
  SetPrototypeForEach(value, (item) => { push(output, formatValue(ctx, item, recurseTimes)); });
  ctx.indentationLvl -= 2;
  return output;
}

function formatMap(ctx: Context, value: Map<unknown, unknown>, recurseTimes: number): string[] {
  const output: string[] = [];
  ctx.indentationLvl += 2;
  MapPrototypeForEach(value, (item, key) => {
    push(output, `${formatValue(ctx, key, recurseTimes)} => ${formatValue(ctx, item, recurseTimes)}`);
  });
  ctx.indentationLvl -= 2;
  return output;
}

function isBelowBreakLength(ctx: Context, output: string[], start: number, base: string): boolean {
  let totalLength = output.length + start;
  if (totalLength + output.length > ctx.breakLength) return false;
  for (let i = 0; i < output.length; i++) {
    totalLength += (output[i] as string).length;
    if (totalLength > ctx.breakLength) return false;
  }
  return base === '' || !StringPrototypeIncludes(base, '\n');
}

function reduceToSingleString(
  ctx: Context, outputIn: string[], base: string, braces: [string, string], extrasType: number, recurseTimes: number, value: unknown,
): string {
  if (ctx.compact === true) {
    if (isBelowBreakLength(ctx, outputIn, 0, base)) return `${braces[0]}${base === '' ? '' : ` ${base}`} ${ArrayPrototypeJoin(outputIn, ', ')} ${braces[1]}`;
    const indentation = StringPrototypeRepeat(' ', ctx.indentationLvl);
    // A long opening ("Set(2) {") would misalign the entries, so they start on the next line.
    const opening = base === '' && braces[0].length === 1 ? ' ' : `${base === '' ? '' : ` ${base}`}\n${indentation}  `;
    return `${braces[0]}${opening}${ArrayPrototypeJoin(outputIn, `,\n${indentation}  `)} ${braces[1]}`;
  }
  let output = outputIn;
  const entries = output.length;
  if (extrasType === kArrayExtrasType && entries > 6) output = groupArrayElements(ctx, output, value as unknown[]);
  if (ctx.currentDepth - recurseTimes < ctx.compact && entries === output.length) {
    const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
    if (isBelowBreakLength(ctx, output, start, base)) {
      const joined = ArrayPrototypeJoin(output, ', ');
      if (!StringPrototypeIncludes(joined, '\n')) {
        return `${base === '' ? '' : `${base} `}${braces[0]} ${joined} ${braces[1]}`;
      }
    }
  }
  const indentation = `\n${StringPrototypeRepeat(' ', ctx.indentationLvl)}`;
  return `${base === '' ? '' : `${base} `}${braces[0]}${indentation}  ${ArrayPrototypeJoin(output, `,${indentation}  `)}${indentation}${braces[1]}`;
}

function groupArrayElements(ctx: Context, output: string[], value: unknown[] | undefined): string[] {
  let totalLength = 0;
  let maxLength = 0;
  let outputLength = output.length;
  const last = output[outputLength - 1] as string;
  if (StringPrototypeStartsWith(last, '... ') && RegExpPrototypeExec(/^\.\.\. \d+ more items?$/, last) !== null) outputLength--;
  const separatorSpace = 2;
  const dataLen: number[] = [];
  for (let i = 0; i < outputLength; i++) {
    const len = (output[i] as string).length;
    dataLen[i] = len;
    totalLength += len + separatorSpace;
    if (maxLength < len) maxLength = len;
  }
  const actualMax = maxLength + separatorSpace;
  if (actualMax * 3 + ctx.indentationLvl < ctx.breakLength && (totalLength / actualMax > 5 || maxLength <= 6)) {
    const averageBias = MathSqrt(actualMax - totalLength / output.length);
    const biasedMax = MathMax(actualMax - 3 - averageBias, 1);
    const columns = MathMin(
      MathRound(MathSqrt(2.5 * biasedMax * outputLength) / biasedMax),
      MathFloor((ctx.breakLength - ctx.indentationLvl) / actualMax),
      (ctx.compact as number) * 4,
      15,
    );
    if (columns <= 1) return output;
    const tmp: string[] = [];
    const maxLineLength: number[] = [];
    for (let i = 0; i < columns; i++) {
      let lineLength = 0;
      for (let j = i; j < outputLength; j += columns) if ((dataLen[j] as number) > lineLength) lineLength = dataLen[j] as number;
      push(maxLineLength, lineLength + separatorSpace);
    }
    let padStart = true;
    if (value !== undefined) {
      for (let i = 0; i < outputLength; i++) {
        if (typeof value[i] !== 'number' && typeof value[i] !== 'bigint') { padStart = false; break; }
      }
    }
    for (let i = 0; i < outputLength; i += columns) {
      const max = MathMin(i + columns, outputLength);
      let str = '';
      let j = i;
      for (; j < max - 1; j++) {
        const padding = (maxLineLength[j - i] as number);
        const cell = `${output[j] as string}, `;
        str += padStart ? StringPrototypePadStart(cell, padding, ' ') : cell + StringPrototypeRepeat(' ', MathMax(0, padding - cell.length));
      }
      if (padStart) {
        const padding = (maxLineLength[j - i] as number) - separatorSpace;
        str += StringPrototypePadStart(output[j], padding, ' ');
      } else {
        str += output[j] as string;
      }
      push(tmp, str);
    }
    if (outputLength < output.length) push(tmp, output[outputLength] as string);
    return tmp;
  }
  return output;
}
