/**
 * TextEncoder, TextDecoder and atob/btoa, with Deno's error names and messages. TextDecoder knows
 * the Encoding Standard's UTF-8, UTF-16LE/BE and single-byte encodings; the multi-byte legacy
 * ones (gbk, big5, shift_jis ...) throw a RangeError that says the sandbox lacks them.
 */
import { DOMException } from './errors.ts';
import { customInspect, named, type InspectFunction } from './inspect-hook.ts';
import {
  ReflectApply, TypedArrayPrototypeSet, TypedArrayPrototypeSlice, TypedArrayPrototypeSubarray, Uint16ArrayCtor,
  ArrayBufferIsView, ArrayBufferPrototypeGetByteLength, ArrayBufferCtor, DataViewPrototypeGetBuffer,
  DataViewPrototypeGetByteLength, DataViewPrototypeGetByteOffset, ObjectPrototypeToString, RangeErrorCtor,
  StringFromCharCode, StringPrototypeCharCodeAt, StringPrototypeIndexOf, StringPrototypeSlice,
  TypedArrayPrototypeGetBuffer, TypedArrayPrototypeGetByteLength, TypedArrayPrototypeGetByteOffset,
  TypedArrayPrototypeGetSymbolToStringTag, TypeErrorCtor, Uint8ArrayCtor, ArrayPrototypeIndexOf, ArrayPrototypeJoin, push,
  toDOMString, toBoolean, ObjectDefineProperty, ObjectKeys, SafeMap, MapPrototypeGet, MapPrototypeSet,
} from './primordials.ts';
import { ENCODING_LABELS, SINGLE_BYTE_TABLES } from './single-byte-encodings.ts';

/** Builds a string from UTF-16 code units in chunks: one call over a large array would overflow the argument limit. */
function codeUnitsToString(units: Uint16Array, start: number, end: number): string {
  const parts: string[] = [];
  for (let at = start; at < end; at += 8192) {
    push(parts, ReflectApply(StringFromCharCode, null, TypedArrayPrototypeSubarray(units, at, at + 8192 < end ? at + 8192 : end)) as string);
  }
  return ArrayPrototypeJoin(parts, '');
}

export function utf8Encode(input: string): Uint8Array {
  const length = input.length;
  // Worst case three bytes per UTF-16 code unit.
  const out = new Uint8ArrayCtor(length * 3);
  let at = 0;
  for (let i = 0; i < length; i++) {
    let code = StringPrototypeCharCodeAt(input, i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < length) {
      const next = StringPrototypeCharCodeAt(input, i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        i++;
      }
    }
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd; // a lone surrogate
    if (code < 0x80) {
      out[at++] = code;
    } else if (code < 0x800) {
      out[at++] = 0xc0 | (code >> 6);
      out[at++] = 0x80 | (code & 0x3f);
    } else if (code < 0x10000) {
      out[at++] = 0xe0 | (code >> 12);
      out[at++] = 0x80 | ((code >> 6) & 0x3f);
      out[at++] = 0x80 | (code & 0x3f);
    } else {
      out[at++] = 0xf0 | (code >> 18);
      out[at++] = 0x80 | ((code >> 12) & 0x3f);
      out[at++] = 0x80 | ((code >> 6) & 0x3f);
      out[at++] = 0x80 | (code & 0x3f);
    }
  }
  return TypedArrayPrototypeSlice(out, 0, at);
}

/** A view of the bytes of any BufferSource, without copying. */
export function bufferSourceBytes(input: unknown, what: string): Uint8Array {
  if (ArrayBufferIsView(input)) {
    if (TypedArrayPrototypeGetSymbolToStringTag(input) !== undefined) {
      return new Uint8ArrayCtor(TypedArrayPrototypeGetBuffer(input) as ArrayBuffer, TypedArrayPrototypeGetByteOffset(input), TypedArrayPrototypeGetByteLength(input));
    }
    return new Uint8ArrayCtor(DataViewPrototypeGetBuffer(input as DataView) as ArrayBuffer, DataViewPrototypeGetByteOffset(input as DataView), DataViewPrototypeGetByteLength(input as DataView));
  }
  const tag = ObjectPrototypeToString(input);
  if (tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]') {
    return new Uint8ArrayCtor(input as ArrayBuffer, 0, ArrayBufferPrototypeGetByteLength(input as ArrayBuffer));
  }
  const error = new TypeErrorCtor(`Failed to execute '${what}': Argument 1 is not an ArrayBuffer, SharedArrayBuffer, or a view on one`);
  ObjectDefineProperty(error, 'code', { value: 'ERR_INVALID_ARG_TYPE', writable: true, configurable: true });
  throw error;
}

/** The multi-byte legacy encodings: Deno decodes them; the guest runtime does not carry their large indexes. */
const UNSUPPORTED = ['gbk', 'gb18030', 'big5', 'euc-jp', 'iso-2022-jp', 'shift_jis', 'euc-kr'];

let labelMap: Map<string, string> | undefined;

/** Label -> encoding name, built on the first label that is not plain "utf-8". */
function labels(): Map<string, string> {
  if (labelMap !== undefined) return labelMap;
  labelMap = new SafeMap<string, string>();
  const names = ObjectKeys(ENCODING_LABELS);
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const list = ENCODING_LABELS[name] as string;
    let start = 0;
    for (;;) {
      const space = StringPrototypeIndexOf(list, ' ', start);
      MapPrototypeSet(labelMap, StringPrototypeSlice(list, start, space === -1 ? list.length : space), name);
      if (space === -1) break;
      start = space + 1;
    }
  }
  return labelMap;
}

function isAsciiWhitespace(code: number): boolean {
  return code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d || code === 0x20;
}

/** The standard's "get an encoding": ASCII whitespace trimmed, ASCII case folded (not Unicode: "\u212Aoi8-r" is no label). */
function resolveLabel(label: string): string | null {
  let start = 0;
  let end = label.length;
  while (start < end && isAsciiWhitespace(StringPrototypeCharCodeAt(label, start))) start++;
  while (end > start && isAsciiWhitespace(StringPrototypeCharCodeAt(label, end - 1))) end--;
  let normalized = '';
  for (let i = start; i < end; i++) {
    const code = StringPrototypeCharCodeAt(label, i);
    normalized += code >= 0x41 && code <= 0x5a ? StringFromCharCode(code + 0x20) : (label[i] as string);
  }
  if (normalized === 'utf-8') return 'utf-8';
  return MapPrototypeGet(labels(), normalized) ?? null;
}

const singleByteTables = new SafeMap<string, Uint16Array>();

/** Bytes 0x80..0xFF of a single-byte encoding as code units, decoded from its table string on first use. */
function singleByteTable(encoding: string): Uint16Array {
  let table = MapPrototypeGet(singleByteTables, encoding);
  if (table !== undefined) return table;
  table = new Uint16ArrayCtor(128);
  if (encoding === 'x-user-defined') {
    for (let i = 0; i < 128; i++) table[i] = 0xf780 + i;
  } else {
    const source = SINGLE_BYTE_TABLES[encoding === 'iso-8859-8-i' ? 'iso-8859-8' : encoding] as string;
    let previous = 0x7f;
    for (let i = 0; i < 128; i++) {
      const code = StringPrototypeCharCodeAt(source, i);
      previous = code === 0x2b ? previous + 1 : code; // "+": the code unit after the previous one
      table[i] = previous;
    }
  }
  MapPrototypeSet(singleByteTables, encoding, table);
  return table;
}

export class TextEncoder {
  get encoding(): string { return 'utf-8'; }

  [customInspect](inspect: InspectFunction): string {
    return inspect(named('TextEncoder', { encoding: 'utf-8' }));
  }

  encode(input: string = ''): Uint8Array {
    return utf8Encode(toDOMString(input));
  }

  encodeInto(source: string, destination: Uint8Array): { read: number; written: number } {
    const text = toDOMString(source);
    const capacity = TypedArrayPrototypeGetByteLength(destination);
    let read = 0;
    let written = 0;
    for (let i = 0; i < text.length; i++) {
      const code = StringPrototypeCharCodeAt(text, i);
      const pair = code >= 0xd800 && code <= 0xdbff && i + 1 < text.length &&
        StringPrototypeCharCodeAt(text, i + 1) >= 0xdc00 && StringPrototypeCharCodeAt(text, i + 1) <= 0xdfff;
      const piece = pair ? (text[i] ?? '') + (text[i + 1] ?? '') : (text[i] ?? '');
      const bytes = utf8Encode(piece);
      if (written + bytes.length > capacity) break;
      for (let j = 0; j < bytes.length; j++) destination[written + j] = bytes[j] as number;
      written += bytes.length;
      read += pair ? 2 : 1;
      if (pair) i++;
    }
    return { read, written };
  }
}

type Decoder = 'utf-8' | 'utf-16le' | 'utf-16be' | 'single-byte';

/**
 * What one pass of a decoder did: `count` code units written to the output; the bytes from
 * `consumed` on wait for the next chunk. A fatal error sets `failed`; then only the bytes
 * `consumed..kept` carry over to a streaming decoder's next call (see TextDecoder#decode).
 */
interface DecodeStep { count: number; consumed: number; failed: boolean; kept: number }

function decoded(count: number, consumed: number): DecodeStep {
  return { count, consumed, failed: false, kept: consumed };
}

function failedAt(count: number, consumed: number, kept = consumed): DecodeStep {
  return { count, consumed, failed: true, kept };
}

export class TextDecoder {
  readonly #encoding: string;
  readonly #decoder: Decoder;
  readonly #table: Uint16Array | null;
  readonly #fatal: boolean;
  readonly #ignoreBOM: boolean;
  #pending: Uint8Array = new Uint8ArrayCtor(0);
  #bomSeen = false;

  constructor(label: string = 'utf-8', options: { fatal?: boolean; ignoreBOM?: boolean } | null = {}) {
    const text = toDOMString(label);
    checkDictionary(options, 'construct \'TextDecoder\'');
    const encoding = resolveLabel(text);
    if (encoding === null) throw encodingError(`The encoding label provided ('${text}') is invalid.`);
    if (ArrayPrototypeIndexOf(UNSUPPORTED, encoding) !== -1) {
      throw encodingError(`The encoding label provided ('${text}') names ${encoding}, which Paddock's sandbox does not support: its TextDecoder knows UTF-8, UTF-16 and the single-byte encodings.`);
    }
    this.#encoding = encoding;
    this.#decoder = encoding === 'utf-8' || encoding === 'utf-16le' || encoding === 'utf-16be' ? encoding : 'single-byte';
    this.#table = this.#decoder === 'single-byte' ? singleByteTable(encoding) : null;
    this.#fatal = toBoolean(options?.fatal);
    this.#ignoreBOM = toBoolean(options?.ignoreBOM);
  }

  get encoding(): string { return this.#encoding; }
  get fatal(): boolean { return this.#fatal; }
  get ignoreBOM(): boolean { return this.#ignoreBOM; }

  [customInspect](inspect: InspectFunction): string {
    return inspect(named('TextDecoder', { encoding: this.#encoding, fatal: this.#fatal, ignoreBOM: this.#ignoreBOM }));
  }

  decode(input?: unknown, options: { stream?: boolean } | null = {}): string {
    checkDictionary(options, 'execute \'decode\' on \'TextDecoder\'');
    const stream = toBoolean(options?.stream);
    const fresh = input === undefined ? new Uint8ArrayCtor(0) : bufferSourceBytes(input, 'decode\' on \'TextDecoder');
    let bytes = fresh;
    const carried = this.#pending.length;
    if (carried > 0) {
      bytes = new Uint8ArrayCtor(this.#pending.length + fresh.length);
      TypedArrayPrototypeSet(bytes, this.#pending, 0);
      TypedArrayPrototypeSet(bytes, fresh, this.#pending.length);
    }
    const units = new Uint16ArrayCtor(bytes.length + 1);
    let step: DecodeStep;
    switch (this.#decoder) {
      case 'utf-8': step = decodeUtf8(bytes, units, stream, this.#fatal); break;
      case 'utf-16le': step = decodeUtf16(bytes, carried, units, stream, this.#fatal, false); break;
      case 'utf-16be': step = decodeUtf16(bytes, carried, units, stream, this.#fatal, true); break;
      case 'single-byte': step = decodeSingleByte(bytes, units, this.#table as Uint16Array, this.#fatal); break;
    }
    if (step.failed) {
      // As in Deno: a non-streaming call starts the next one afresh; a streaming decoder goes on
      // past the error (no longer at the start, so a later BOM is kept) and drops the rest of the chunk.
      this.#pending = stream ? TypedArrayPrototypeSlice(bytes, step.consumed, step.kept) : new Uint8ArrayCtor(0);
      this.#bomSeen = stream;
      throw invalidData();
    }
    this.#pending = TypedArrayPrototypeSlice(bytes, step.consumed, bytes.length);
    let start = 0;
    // Only the UTF encodings have a BOM to strip (no single-byte table maps a byte to U+FEFF).
    if (!this.#ignoreBOM && !this.#bomSeen && step.count > 0 && units[0] === 0xfeff && this.#decoder !== 'single-byte') start = 1;
    if (step.count > 0) this.#bomSeen = true;
    if (!stream) this.#bomSeen = false;
    return codeUnitsToString(units, start, step.count);
  }
}

/** Web IDL: an options argument is undefined, null or an object. */
function checkDictionary(options: unknown, what: string): void {
  if (options !== undefined && options !== null && typeof options !== 'object' && typeof options !== 'function') {
    const error = new TypeErrorCtor(`Failed to ${what}: Argument 2 can not be converted to a dictionary`);
    ObjectDefineProperty(error, 'code', { value: 'ERR_INVALID_ARG_TYPE', writable: true, configurable: true });
    throw error;
  }
}

function encodingError(message: string): RangeError {
  const error = new RangeErrorCtor(message);
  ObjectDefineProperty(error, 'code', { value: 'ERR_ENCODING_NOT_SUPPORTED', writable: true, configurable: true });
  return error;
}

/**
 * The WHATWG UTF-8 decoder over a whole buffer. Writes code units into `units` (never more than
 * bytes.length + 1); a trailing partial sequence waits when streaming.
 */
function decodeUtf8(bytes: Uint8Array, units: Uint16Array, stream: boolean, fatal: boolean): DecodeStep {
  const length = bytes.length;
  let count = 0;
  let i = 0;
  while (i < length) {
    const lead = bytes[i] as number;
    if (lead < 0x80) { units[count++] = lead; i++; continue; }
    let needed: number;
    let code: number;
    let lower = 0x80;
    let upper = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) { needed = 1; code = lead & 0x1f; }
    else if (lead >= 0xe0 && lead <= 0xef) {
      if (lead === 0xe0) lower = 0xa0;
      if (lead === 0xed) upper = 0x9f;
      needed = 2; code = lead & 0xf;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      if (lead === 0xf0) lower = 0x90;
      if (lead === 0xf4) upper = 0x8f;
      needed = 3; code = lead & 0x7;
    } else {
      if (fatal) return failedAt(count, length);
      units[count++] = 0xfffd;
      i++;
      continue;
    }
    let j = 1;
    let valid = true;
    for (; j <= needed; j++) {
      if (i + j >= length) break;
      const byte = bytes[i + j] as number;
      if (byte < lower || byte > upper) { valid = false; break; }
      lower = 0x80; upper = 0xbf;
      code = (code << 6) | (byte & 0x3f);
    }
    if (valid && j <= needed) {
      // The input ends inside a sequence.
      if (stream) return decoded(count, i);
      if (fatal) return failedAt(count, length);
      units[count++] = 0xfffd;
      return decoded(count, length);
    }
    if (!valid) {
      if (fatal) return failedAt(count, length);
      units[count++] = 0xfffd;
      i += j; // the offending byte starts the next sequence
      continue;
    }
    if (code >= 0x10000) {
      code -= 0x10000;
      units[count++] = 0xd800 + (code >> 10);
      units[count++] = 0xdc00 + (code & 0x3ff);
    } else {
      units[count++] = code;
    }
    i += needed + 1;
  }
  return decoded(count, length);
}

function invalidData(): TypeError {
  return new TypeErrorCtor('The encoded data is not valid');
}

/**
 * The WHATWG UTF-16LE/BE decoder. An unpaired surrogate is one error (U+FFFD), and the unit after
 * a lone lead is decoded on its own; at the end of the input a lead and a lone byte after it are
 * one error together. A streaming decoder keeps a trailing lead or odd byte for the next chunk;
 * `carried` says how many of `bytes` it kept from the previous call.
 */
function decodeUtf16(bytes: Uint8Array, carried: number, units: Uint16Array, stream: boolean, fatal: boolean, bigEndian: boolean): DecodeStep {
  const length = bytes.length;
  const unitAt = (at: number): number => bigEndian
    ? ((bytes[at] as number) << 8) | (bytes[at + 1] as number)
    : (bytes[at] as number) | ((bytes[at + 1] as number) << 8);
  let count = 0;
  let i = 0;
  for (; i + 1 < length; i += 2) {
    const unit = unitAt(i);
    if (unit < 0xd800 || unit > 0xdfff) { units[count++] = unit; continue; }
    if (unit <= 0xdbff) {
      if (i + 3 < length) {
        const next = unitAt(i + 2);
        if (next >= 0xdc00 && next <= 0xdfff) {
          units[count++] = unit;
          units[count++] = next;
          i += 2;
          continue;
        }
        // Deno's decoder (encoding_rs) keeps the next unit through a streaming error only when the
        // lead came (in whole or in part) from an earlier chunk; otherwise the unit goes with the chunk.
        if (fatal) return failedAt(count, i + 2, i < carried ? i + 4 : i + 2);
        units[count++] = 0xfffd;
        continue;
      }
      if (stream) return decoded(count, i);
      if (fatal) return failedAt(count, length);
      units[count++] = 0xfffd;
      return decoded(count, length);
    }
    if (fatal) return failedAt(count, i + 2); // a lone trail
    units[count++] = 0xfffd;
  }
  if (i < length) {
    if (stream) return decoded(count, i);
    if (fatal) return failedAt(count, length);
    units[count++] = 0xfffd;
  }
  return decoded(count, length);
}

/** A single-byte decoder: ASCII below 0x80, the table above; U+FFFD in the table is a byte the encoding leaves unmapped. */
function decodeSingleByte(bytes: Uint8Array, units: Uint16Array, table: Uint16Array, fatal: boolean): DecodeStep {
  const length = bytes.length;
  for (let i = 0; i < length; i++) {
    const byte = bytes[i] as number;
    const unit = byte < 0x80 ? byte : (table[byte - 0x80] as number);
    if (unit === 0xfffd && fatal) return failedAt(i, length);
    units[i] = unit;
  }
  return decoded(length, length);
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUES = (() => {
  const table = new Uint8ArrayCtor(128).fill(255);
  for (let i = 0; i < 64; i++) table[StringPrototypeCharCodeAt(BASE64, i)] = i;
  return table;
})();

export function btoa(data: unknown): string {
  const text = toDOMString(data);
  const length = text.length;
  const bytes = new Uint8ArrayCtor(length);
  for (let i = 0; i < length; i++) {
    const code = StringPrototypeCharCodeAt(text, i);
    if (code > 0xff) throw new DOMException('Cannot encode string: string contains characters outside of the Latin1 range', 'InvalidCharacterError');
    bytes[i] = code;
  }
  return bytesToBase64(bytes);
}

export function bytesToBase64(bytes: Uint8Array): string {
  const units = new Uint16ArrayCtor(((bytes.length + 2) / 3 | 0) * 4);
  let count = 0;
  const length = bytes.length;
  let i = 0;
  for (; i + 2 < length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    units[count++] = (StringPrototypeCharCodeAt(BASE64, n >> 18));
    units[count++] = (StringPrototypeCharCodeAt(BASE64, (n >> 12) & 63));
    units[count++] = (StringPrototypeCharCodeAt(BASE64, (n >> 6) & 63));
    units[count++] = (StringPrototypeCharCodeAt(BASE64, n & 63));
  }
  if (i < length) {
    const n = ((bytes[i] as number) << 16) | (i + 1 < length ? (bytes[i + 1] as number) << 8 : 0);
    units[count++] = (StringPrototypeCharCodeAt(BASE64, n >> 18));
    units[count++] = (StringPrototypeCharCodeAt(BASE64, (n >> 12) & 63));
    units[count++] = (i + 1 < length ? StringPrototypeCharCodeAt(BASE64, (n >> 6) & 63) : 61);
    units[count++] = (61);
  }
  return codeUnitsToString(units, 0, count);
}

/** The forgiving-base64 decode of the HTML standard. */
export function atob(data: unknown): string {
  const text = toDOMString(data);
  const values = new Uint8ArrayCtor(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const code = StringPrototypeCharCodeAt(text, i);
    // ASCII whitespace is removed first.
    if (code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d || code === 0x20) continue;
    if (code === 61) { values[length++] = 64; continue; }
    const value = code < 128 ? (BASE64_VALUES[code] as number) : 255;
    if (value === 255) throw new DOMException('Failed to decode base64', 'InvalidCharacterError');
    values[length++] = value;
  }
  if (length % 4 === 0 && length > 0 && values[length - 1] === 64) {
    length--;
    if (values[length - 1] === 64) length--;
  }
  if (length % 4 === 1) throw new DOMException('Failed to decode base64', 'InvalidCharacterError');
  const out = new Uint16ArrayCtor(length);
  let count = 0;
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < length; i++) {
    const value = values[i] as number;
    if (value === 64) throw new DOMException('Failed to decode base64', 'InvalidCharacterError'); // '=' before the end
    buffer = ((buffer << 6) | value) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[count++] = (buffer >> bits) & 0xff;
    }
  }
  return codeUnitsToString(out, 0, count);
}

/** Decodes bytes from base64 (used by data: URLs and tests); same rules as atob. */
export function base64ToBytes(data: string): Uint8Array {
  const binary = atob(data);
  const bytes = new Uint8ArrayCtor(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = StringPrototypeCharCodeAt(binary, i);
  return bytes;
}

export function copyBytes(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8ArrayCtor(new ArrayBufferCtor(bytes.length));
  for (let i = 0; i < bytes.length; i++) copy[i] = bytes[i] as number;
  return copy;
}
