/** TextEncoder, TextDecoder (UTF-8 and UTF-16LE), atob and btoa, with Deno's error names and messages. */
import { DOMException } from './errors.ts';
import { customInspect, named, type InspectFunction } from './inspect-hook.ts';
import {
  ReflectApply, TypedArrayPrototypeSet, TypedArrayPrototypeSlice, TypedArrayPrototypeSubarray, Uint16ArrayCtor,
  ArrayBufferIsView, ArrayBufferPrototypeGetByteLength, ArrayBufferCtor, DataViewPrototypeGetBuffer,
  DataViewPrototypeGetByteLength, DataViewPrototypeGetByteOffset, ObjectPrototypeToString, RangeErrorCtor,
  StringFromCharCode, StringPrototypeCharCodeAt, StringPrototypeToLowerCase, StringPrototypeTrim,
  TypedArrayPrototypeGetBuffer, TypedArrayPrototypeGetByteLength, TypedArrayPrototypeGetByteOffset,
  TypedArrayPrototypeGetSymbolToStringTag, TypeErrorCtor, Uint8ArrayCtor, ArrayPrototypeJoin, push, toDOMString,
  toBoolean, ObjectDefineProperty,
} from './primordials.ts';

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

const UTF8_LABELS = ['unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'utf-8', 'utf8', 'x-unicode20utf8'];
const UTF16LE_LABELS = ['csunicode', 'iso-10646-ucs-2', 'ucs-2', 'unicode', 'unicodefeff', 'utf-16', 'utf-16le'];

function resolveLabel(label: string): 'utf-8' | 'utf-16le' | null {
  const normalized = StringPrototypeToLowerCase(StringPrototypeTrim(label));
  for (let i = 0; i < UTF8_LABELS.length; i++) if (UTF8_LABELS[i] === normalized) return 'utf-8';
  for (let i = 0; i < UTF16LE_LABELS.length; i++) if (UTF16LE_LABELS[i] === normalized) return 'utf-16le';
  return null;
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

export class TextDecoder {
  readonly #encoding: 'utf-8' | 'utf-16le';
  readonly #fatal: boolean;
  readonly #ignoreBOM: boolean;
  #pending: Uint8Array = new Uint8ArrayCtor(0);
  #bomSeen = false;

  constructor(label: string = 'utf-8', options: { fatal?: boolean; ignoreBOM?: boolean } = {}) {
    const encoding = resolveLabel(toDOMString(label));
    if (encoding === null) {
      const error = new RangeErrorCtor(`The encoding label provided ('${label}') is invalid.`);
      ObjectDefineProperty(error, 'code', { value: 'ERR_ENCODING_NOT_SUPPORTED', writable: true, configurable: true });
      throw error;
    }
    this.#encoding = encoding;
    this.#fatal = toBoolean(options.fatal);
    this.#ignoreBOM = toBoolean(options.ignoreBOM);
  }

  get encoding(): string { return this.#encoding; }
  get fatal(): boolean { return this.#fatal; }
  get ignoreBOM(): boolean { return this.#ignoreBOM; }

  [customInspect](inspect: InspectFunction): string {
    return inspect(named('TextDecoder', { encoding: this.#encoding, fatal: this.#fatal, ignoreBOM: this.#ignoreBOM }));
  }

  decode(input?: unknown, options: { stream?: boolean } = {}): string {
    const stream = toBoolean(options.stream);
    const fresh = input === undefined ? new Uint8ArrayCtor(0) : bufferSourceBytes(input, 'decode\' on \'TextDecoder');
    let bytes = fresh;
    if (this.#pending.length > 0) {
      bytes = new Uint8ArrayCtor(this.#pending.length + fresh.length);
      TypedArrayPrototypeSet(bytes, this.#pending, 0);
      TypedArrayPrototypeSet(bytes, fresh, this.#pending.length);
    }
    const units = new Uint16ArrayCtor(bytes.length + 1);
    let result: { consumed: number; count: number };
    try {
      result = this.#encoding === 'utf-8' ? decodeUtf8(bytes, units, stream, this.#fatal) : decodeUtf16le(bytes, units, stream, this.#fatal);
    } catch (error) {
      this.#pending = new Uint8ArrayCtor(0);
      this.#bomSeen = false;
      throw error;
    }
    this.#pending = TypedArrayPrototypeSlice(bytes, result.consumed, bytes.length);
    let start = 0;
    if (!this.#ignoreBOM && !this.#bomSeen && result.count > 0 && units[0] === 0xfeff) start = 1;
    if (result.count > 0) this.#bomSeen = true;
    if (!stream) this.#bomSeen = false;
    return codeUnitsToString(units, start, result.count);
  }
}

/**
 * The WHATWG UTF-8 decoder over a whole buffer. Writes code units into `units` (never more than
 * bytes.length + 1) and says how many bytes it consumed: a trailing partial sequence waits when streaming.
 */
function decodeUtf8(bytes: Uint8Array, units: Uint16Array, stream: boolean, fatal: boolean): { consumed: number; count: number } {
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
      if (fatal) throw invalidData();
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
      if (stream) return { consumed: i, count };
      if (fatal) throw invalidData();
      units[count++] = 0xfffd;
      return { consumed: length, count };
    }
    if (!valid) {
      if (fatal) throw invalidData();
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
  return { consumed: length, count };
}

function invalidData(): TypeError {
  return new TypeErrorCtor('The encoded data is not valid');
}

function decodeUtf16le(bytes: Uint8Array, units: Uint16Array, stream: boolean, fatal: boolean): { consumed: number; count: number } {
  const even = bytes.length - (bytes.length % 2);
  let count = 0;
  for (let i = 0; i < even; i += 2) units[count++] = (bytes[i] as number) | ((bytes[i + 1] as number) << 8);
  // Lone surrogates become U+FFFD, as the UTF-16 decoder says; a trailing lead waits when streaming.
  for (let i = 0; i < count; i++) {
    const unit = units[i] as number;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      if (i + 1 < count) {
        const next = units[i + 1] as number;
        if (next >= 0xdc00 && next <= 0xdfff) { i++; continue; }
      } else if (stream) {
        return { consumed: i * 2, count: i };
      }
    } else if (!(unit >= 0xdc00 && unit <= 0xdfff)) {
      continue;
    }
    if (fatal) throw invalidData();
    units[i] = 0xfffd;
  }
  if (even !== bytes.length && !stream) {
    if (fatal) throw invalidData();
    units[count++] = 0xfffd;
    return { consumed: bytes.length, count };
  }
  return { consumed: even, count };
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
