/**
 * URL and URLSearchParams: the WHATWG URL parser (state machine, host parsing, IPv4/IPv6,
 * setters through state overrides), written on primordials so a tool that patches builtins cannot
 * change how fetch resolves its URLs. IDNA is UTS #46 approximated by NFKC + lower case + Punycode;
 * the host re-parses and checks every URL it is given, so this is about fidelity, not safety.
 */
import { utf8Encode, TextDecoder } from './encoding.ts';
import { customInspect, named, type InspectFunction } from './inspect-hook.ts';
import {
  ArrayPrototypeJoin, ArrayPrototypeSlice, ArrayPrototypeSplice, MathFloor, NumberPrototypeToString, ObjectCreate,
  ObjectDefineProperty, ObjectGetPrototypeOf, ObjectKeys, StringFromCodePoint, StringPrototypeCharCodeAt,
  StringPrototypeCodePointAt, StringPrototypeIndexOf, StringPrototypeNormalize, StringPrototypePadStart,
  StringPrototypeSlice, StringPrototypeToLowerCase, StringPrototypeToUpperCase, SymbolIterator, SymbolToStringTag,
  TypeErrorCtor, push, StringPrototypeToWellFormed, ReflectApply, TypedArrayPrototypeSubarray, toDOMString,
} from './primordials.ts';

const EOF = -1;

interface UrlRecord {
  scheme: string;
  username: string;
  password: string;
  /** Serialized host ('' is the empty host), or null. */
  host: string | null;
  port: number | null;
  /** A list of segments, or a string for an opaque path. */
  path: string[] | string;
  query: string | null;
  fragment: string | null;
}

type State =
  | 'scheme start' | 'scheme' | 'no scheme' | 'special relative or authority' | 'path or authority' | 'relative'
  | 'relative slash' | 'special authority slashes' | 'special authority ignore slashes' | 'authority' | 'host' | 'hostname'
  | 'port' | 'file' | 'file slash' | 'file host' | 'path start' | 'path' | 'opaque path' | 'query' | 'fragment';

const SPECIAL_PORTS: Readonly<Record<string, number | null>> = {
  __proto__: null, 'ftp': 21, 'file': null, 'http': 80, 'https': 443, 'ws': 80, 'wss': 443,
};

function isSpecialScheme(scheme: string): boolean {
  return scheme === 'ftp' || scheme === 'file' || scheme === 'http' || scheme === 'https' || scheme === 'ws' || scheme === 'wss';
}

function defaultPort(scheme: string): number | null {
  return isSpecialScheme(scheme) ? (SPECIAL_PORTS[scheme] ?? null) : null;
}

// Percent-encode sets, as predicates over a code point.
const isC0Control = (c: number): boolean => c < 0x20 || c > 0x7e;
const isFragmentSet = (c: number): boolean => isC0Control(c) || c === 0x20 || c === 0x22 || c === 0x3c || c === 0x3e || c === 0x60;
const isQuerySet = (c: number): boolean => isC0Control(c) || c === 0x20 || c === 0x22 || c === 0x23 || c === 0x3c || c === 0x3e;
const isSpecialQuerySet = (c: number): boolean => isQuerySet(c) || c === 0x27;
// Deno (rust-url) leaves ^ unencoded in paths; the newest URL standard encodes it. We follow Deno.
const isPathSet = (c: number): boolean => isQuerySet(c) || c === 0x3f || c === 0x60 || c === 0x7b || c === 0x7d;
const isUserinfoSet = (c: number): boolean =>
  isPathSet(c) || c === 0x2f || c === 0x3a || c === 0x3b || c === 0x3d || c === 0x40 || (c >= 0x5b && c <= 0x5e) || c === 0x7c;
const isComponentSet = (c: number): boolean => isUserinfoSet(c) || (c >= 0x24 && c <= 0x26) || c === 0x2b || c === 0x2c;
const isFormSet = (c: number): boolean => isComponentSet(c) || c === 0x21 || (c >= 0x27 && c <= 0x29) || c === 0x7e;

function hex2(byte: number): string {
  return '%' + StringPrototypePadStart(StringPrototypeToUpperCase(NumberPrototypeToString(byte, 16)), 2, '0');
}

function percentEncode(c: number, inSet: (c: number) => boolean): string {
  if (!inSet(c)) return StringFromCodePoint(c);
  const bytes = utf8Encode(StringFromCodePoint(c));
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += hex2(bytes[i] as number);
  return out;
}

function percentEncodeString(input: string, inSet: (c: number) => boolean, spaceAsPlus = false): string {
  let out = '';
  const points = codePoints(input);
  for (let i = 0; i < points.length; i++) {
    const c = points[i] as number;
    out += spaceAsPlus && c === 0x20 ? '+' : percentEncode(c, inSet);
  }
  return out;
}

function isHexDigit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function hexValue(c: number): number {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10;
}

/** Percent-decodes the UTF-8 bytes of `input`. */
function percentDecode(input: string): Uint8Array {
  const bytes = utf8Encode(input);
  const out = new Uint8Array(bytes.length);
  let count = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte === 0x25 && i + 2 < bytes.length && isHexDigit(bytes[i + 1] as number) && isHexDigit(bytes[i + 2] as number)) {
      out[count++] = hexValue(bytes[i + 1] as number) * 16 + hexValue(bytes[i + 2] as number);
      i += 2;
    } else {
      out[count++] = byte;
    }
  }
  return TypedArrayPrototypeSubarray(out, 0, count);
}

const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });
function utf8DecodeWithoutBOM(bytes: Uint8Array): string {
  return utf8Decoder.decode(bytes);
}

function codePoints(input: string): number[] {
  const out: number[] = [];
  let count = 0;
  for (let i = 0; i < input.length; i++) {
    const c = StringPrototypeCodePointAt(input, i) as number;
    out[count++] = c;
    if (c > 0xffff) i++;
  }
  return out;
}

const isAsciiDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isAsciiAlpha = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isAsciiAlphanumeric = (c: number): boolean => isAsciiDigit(c) || isAsciiAlpha(c);

function isWindowsDriveLetter(s: string, normalizedOnly = false): boolean {
  if (s.length !== 2 || !isAsciiAlpha(StringPrototypeCharCodeAt(s, 0))) return false;
  const second = StringPrototypeCharCodeAt(s, 1);
  return second === 0x3a || (!normalizedOnly && second === 0x7c);
}

function startsWithWindowsDriveLetter(points: number[], at: number): boolean {
  if (points.length - at < 2) return false;
  const first = points[at] as number;
  const second = points[at + 1] as number;
  if (!isAsciiAlpha(first) || (second !== 0x3a && second !== 0x7c)) return false;
  if (points.length - at === 2) return true;
  const third = points[at + 2] as number;
  return third === 0x2f || third === 0x5c || third === 0x3f || third === 0x23;
}

function isSingleDot(s: string): boolean {
  return s === '.' || StringPrototypeToLowerCase(s) === '%2e';
}

function isDoubleDot(s: string): boolean {
  const lower = StringPrototypeToLowerCase(s);
  return lower === '..' || lower === '.%2e' || lower === '%2e.' || lower === '%2e%2e';
}

function shortenPath(url: UrlRecord): void {
  const path = url.path as string[];
  if (url.scheme === 'file' && path.length === 1 && isWindowsDriveLetter(path[0] as string, true)) return;
  if (path.length > 0) path.length--;
}

// ---- hosts ----

function isForbiddenHostCodePoint(c: number): boolean {
  return c === 0 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x20 || c === 0x23 || c === 0x2f || c === 0x3a ||
    c === 0x3c || c === 0x3e || c === 0x3f || c === 0x40 || c === 0x5b || c === 0x5c || c === 0x5d || c === 0x5e || c === 0x7c;
}

function isForbiddenDomainCodePoint(c: number): boolean {
  return isForbiddenHostCodePoint(c) || (c >= 0 && c <= 0x1f) || c === 0x25 || c === 0x7f;
}

/** Returns the serialized host, or null on failure. */
function parseHost(input: string, isOpaque: boolean): string | null {
  if (StringPrototypeCharCodeAt(input, 0) === 0x5b) {
    if (StringPrototypeCharCodeAt(input, input.length - 1) !== 0x5d) return null;
    const pieces = parseIPv6(StringPrototypeSlice(input, 1, -1));
    return pieces === null ? null : `[${serializeIPv6(pieces)}]`;
  }
  if (isOpaque) {
    const points = codePoints(input);
    for (let i = 0; i < points.length; i++) if (isForbiddenHostCodePoint(points[i] as number)) return null;
    return percentEncodeString(input, isC0Control);
  }
  const domain = utf8DecodeWithoutBOM(percentDecode(input));
  const ascii = domainToASCII(domain);
  if (ascii === null || ascii === '') return null;
  const points = codePoints(ascii);
  for (let i = 0; i < points.length; i++) if (isForbiddenDomainCodePoint(points[i] as number)) return null;
  if (endsInANumber(ascii)) {
    const ipv4 = parseIPv4(ascii);
    return ipv4 === null ? null : serializeIPv4(ipv4);
  }
  return ascii;
}

function splitDots(input: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (;;) {
    const dot = StringPrototypeIndexOf(input, '.', start);
    if (dot === -1) { push(parts, StringPrototypeSlice(input, start)); return parts; }
    push(parts, StringPrototypeSlice(input, start, dot));
    start = dot + 1;
  }
}

function endsInANumber(input: string): boolean {
  const parts = splitDots(input);
  if (parts[parts.length - 1] === '') {
    if (parts.length === 1) return false;
    parts.length--;
  }
  const last = parts[parts.length - 1] as string;
  if (last !== '') {
    let digits = true;
    for (let i = 0; i < last.length; i++) if (!isAsciiDigit(StringPrototypeCharCodeAt(last, i))) { digits = false; break; }
    if (digits) return true;
  }
  return parseIPv4Number(last) !== null;
}

function parseIPv4Number(input: string): number | null {
  if (input === '') return null;
  let radix = 10;
  let text = input;
  if (text.length >= 2 && (StringPrototypeSlice(text, 0, 2) === '0x' || StringPrototypeSlice(text, 0, 2) === '0X')) {
    radix = 16;
    text = StringPrototypeSlice(text, 2);
  } else if (text.length >= 2 && StringPrototypeCharCodeAt(text, 0) === 0x30) {
    radix = 8;
    text = StringPrototypeSlice(text, 1);
  }
  if (text === '') return 0;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const c = StringPrototypeCharCodeAt(text, i);
    let digit: number;
    if (radix === 16 && isHexDigit(c)) digit = hexValue(c);
    else if (isAsciiDigit(c) && c - 0x30 < radix) digit = c - 0x30;
    else return null;
    value = value * radix + digit;
  }
  return value;
}

function parseIPv4(input: string): number | null {
  const parts = splitDots(input);
  if (parts[parts.length - 1] === '' && parts.length > 1) parts.length--;
  if (parts.length > 4) return null;
  const numbers: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const n = parseIPv4Number(parts[i] as string);
    if (n === null) return null;
    push(numbers, n);
  }
  for (let i = 0; i < numbers.length - 1; i++) if ((numbers[i] as number) > 255) return null;
  const last = numbers[numbers.length - 1] as number;
  if (last >= 256 ** (5 - numbers.length)) return null;
  let ipv4 = last;
  for (let i = 0; i < numbers.length - 1; i++) ipv4 += (numbers[i] as number) * 256 ** (3 - i);
  return ipv4;
}

function serializeIPv4(address: number): string {
  const parts: string[] = [];
  let n = address;
  for (let i = 0; i < 4; i++) {
    parts[3 - i] = toDOMString(n % 256);
    n = MathFloor(n / 256);
  }
  return ArrayPrototypeJoin(parts, '.');
}

function parseIPv6(input: string): number[] | null {
  const address = [0, 0, 0, 0, 0, 0, 0, 0];
  let pieceIndex = 0;
  let compress: number | null = null;
  const c = codePoints(input);
  let p = 0;
  const at = (i: number): number => (i < c.length ? (c[i] as number) : EOF);
  if (at(p) === 0x3a) {
    if (at(p + 1) !== 0x3a) return null;
    p += 2;
    pieceIndex++;
    compress = pieceIndex;
  }
  while (at(p) !== EOF) {
    if (pieceIndex === 8) return null;
    if (at(p) === 0x3a) {
      if (compress !== null) return null;
      p++;
      pieceIndex++;
      compress = pieceIndex;
      continue;
    }
    let value = 0;
    let length = 0;
    while (length < 4 && isHexDigit(at(p))) {
      value = value * 0x10 + hexValue(at(p));
      p++;
      length++;
    }
    if (at(p) === 0x2e) {
      if (length === 0) return null;
      p -= length;
      if (pieceIndex > 6) return null;
      let numbersSeen = 0;
      while (at(p) !== EOF) {
        let ipv4Piece: number | null = null;
        if (numbersSeen > 0) {
          if (at(p) === 0x2e && numbersSeen < 4) p++;
          else return null;
        }
        if (!isAsciiDigit(at(p))) return null;
        while (isAsciiDigit(at(p))) {
          const number = at(p) - 0x30;
          if (ipv4Piece === null) ipv4Piece = number;
          else if (ipv4Piece === 0) return null;
          else ipv4Piece = ipv4Piece * 10 + number;
          if (ipv4Piece > 255) return null;
          p++;
        }
        address[pieceIndex] = (address[pieceIndex] as number) * 0x100 + (ipv4Piece as number);
        numbersSeen++;
        if (numbersSeen === 2 || numbersSeen === 4) pieceIndex++;
      }
      if (numbersSeen !== 4) return null;
      break;
    } else if (at(p) === 0x3a) {
      p++;
      if (at(p) === EOF) return null;
    } else if (at(p) !== EOF) {
      return null;
    }
    address[pieceIndex] = value;
    pieceIndex++;
  }
  if (compress !== null) {
    let swaps = pieceIndex - compress;
    pieceIndex = 7;
    while (pieceIndex !== 0 && swaps > 0) {
      const swap = address[compress + swaps - 1] as number;
      address[compress + swaps - 1] = address[pieceIndex] as number;
      address[pieceIndex] = swap;
      pieceIndex--;
      swaps--;
    }
  } else if (pieceIndex !== 8) {
    return null;
  }
  return address;
}

function serializeIPv6(address: number[]): string {
  // Compress the first longest run of two or more zero pieces.
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (address[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && address[j] === 0) j++;
    if (j - i > bestLength) { bestStart = i; bestLength = j - i; }
    i = j;
  }
  let output = '';
  let ignore0 = false;
  for (let i = 0; i < 8; i++) {
    if (ignore0 && address[i] === 0) continue;
    ignore0 = false;
    if (bestStart === i) {
      output += i === 0 ? '::' : ':';
      ignore0 = true;
      continue;
    }
    output += NumberPrototypeToString(address[i], 16);
    if (i !== 7) output += ':';
  }
  return output;
}

// ---- IDNA (approximated) ----

function domainToASCII(domain: string): string | null {
  let ascii = true;
  for (let i = 0; i < domain.length; i++) if (StringPrototypeCharCodeAt(domain, i) > 0x7f) { ascii = false; break; }
  if (ascii) return StringPrototypeToLowerCase(domain);
  // UTS #46 mapping, approximated: compatibility-normalize, case-fold, then map ideographic full stops.
  let mapped = StringPrototypeNormalize(StringPrototypeToLowerCase(StringPrototypeNormalize(StringPrototypeToWellFormed(domain), 'NFKC')), 'NFC');
  let dotted = '';
  for (let i = 0; i < mapped.length; i++) {
    const c = StringPrototypeCharCodeAt(mapped, i);
    dotted += c === 0x3002 || c === 0xff0e || c === 0xff61 ? '.' : (mapped[i] as string);
  }
  mapped = dotted;
  const labels = splitDots(mapped);
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i] as string;
    let needsPunycode = false;
    for (let j = 0; j < label.length; j++) if (StringPrototypeCharCodeAt(label, j) > 0x7f) { needsPunycode = true; break; }
    if (needsPunycode) labels[i] = 'xn--' + punycodeEncode(label);
  }
  return ArrayPrototypeJoin(labels, '.');
}

function punycodeEncode(label: string): string {
  const input = codePoints(label);
  const base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700;
  const digit = (d: number): string => StringFromCodePoint(d < 26 ? 0x61 + d : 0x30 + d - 26);
  const adapt = (deltaIn: number, numPoints: number, firstTime: boolean): number => {
    let delta = firstTime ? MathFloor(deltaIn / damp) : deltaIn >> 1;
    delta += MathFloor(delta / numPoints);
    let k = 0;
    while (delta > ((base - tMin) * tMax) >> 1) {
      delta = MathFloor(delta / (base - tMin));
      k += base;
    }
    return MathFloor(k + ((base - tMin + 1) * delta) / (delta + skew));
  };
  let output = '';
  for (let i = 0; i < input.length; i++) if ((input[i] as number) < 0x80) output += StringFromCodePoint(input[i] as number);
  const basicLength = output.length;
  let handled = basicLength;
  if (basicLength > 0) output += '-';
  let n = 0x80;
  let delta = 0;
  let bias = 72;
  while (handled < input.length) {
    let m = 0x10ffff + 1;
    for (let i = 0; i < input.length; i++) if ((input[i] as number) >= n && (input[i] as number) < m) m = input[i] as number;
    delta += (m - n) * (handled + 1);
    n = m;
    for (let i = 0; i < input.length; i++) {
      const c = input[i] as number;
      if (c < n) delta++;
      if (c === n) {
        let q = delta;
        for (let k = base; ; k += base) {
          const t = k <= bias ? tMin : k >= bias + tMax ? tMax : k - bias;
          if (q < t) break;
          output += digit(t + ((q - t) % (base - t)));
          q = MathFloor((q - t) / (base - t));
        }
        output += digit(q);
        bias = adapt(delta, handled + 1, handled === basicLength);
        delta = 0;
        handled++;
      }
    }
    delta++;
    n++;
  }
  return output;
}

// ---- the basic URL parser ----

function newRecord(): UrlRecord {
  return { scheme: '', username: '', password: '', host: null, port: null, path: [], query: null, fragment: null };
}

function hasCredentials(url: UrlRecord): boolean {
  return url.username !== '' || url.password !== '';
}

function stripInput(input: string): number[] {
  const all = codePoints(input);
  let start = 0;
  let end = all.length;
  while (start < end && (all[start] as number) <= 0x20) start++;
  while (end > start && (all[end - 1] as number) <= 0x20) end--;
  const out: number[] = [];
  let count = 0;
  for (let i = start; i < end; i++) {
    const c = all[i] as number;
    if (c !== 0x09 && c !== 0x0a && c !== 0x0d) out[count++] = c;
  }
  return out;
}

/**
 * Returns the new record, `null` on failure, or (with a state override) `undefined` when the
 * override stops early; with an override the given record is modified in place.
 */
function basicParse(input: string, base: UrlRecord | null, target?: UrlRecord, stateOverride?: State): UrlRecord | null {
  const url = target ?? newRecord();
  const c = target === undefined ? stripInput(input) : (() => {
    const all = codePoints(input);
    const out: number[] = [];
    let count = 0;
    for (let i = 0; i < all.length; i++) if (all[i] !== 0x09 && all[i] !== 0x0a && all[i] !== 0x0d) out[count++] = all[i] as number;
    return out;
  })();
  let state: State = stateOverride ?? 'scheme start';
  let buffer = '';
  let atSignSeen = false;
  let insideBrackets = false;
  let passwordTokenSeen = false;
  const remainingStartsWith = (p: number, ch: number): boolean => c[p + 1] === ch;

  // The pointer may step back onto EOF to reprocess it in a new state, so the loop runs until it passes EOF.
  for (let p = 0; p <= c.length; p++) {
    const ch = p < c.length ? (c[p] as number) : EOF;
    const special = isSpecialScheme(url.scheme);
    switch (state) {
      case 'scheme start':
        if (isAsciiAlpha(ch)) {
          buffer += StringPrototypeToLowerCase(StringFromCodePoint(ch));
          state = 'scheme';
        } else if (stateOverride === undefined) {
          state = 'no scheme';
          p--;
        } else {
          return null;
        }
        break;

      case 'scheme':
        if (isAsciiAlphanumeric(ch) || ch === 0x2b || ch === 0x2d || ch === 0x2e) {
          buffer += StringPrototypeToLowerCase(StringFromCodePoint(ch));
        } else if (ch === 0x3a) {
          if (stateOverride !== undefined) {
            if (isSpecialScheme(url.scheme) !== isSpecialScheme(buffer)) return url;
            if ((hasCredentials(url) || url.port !== null) && buffer === 'file') return url;
            if (url.scheme === 'file' && url.host === '') return url;
          }
          url.scheme = buffer;
          if (stateOverride !== undefined) {
            if (url.port === defaultPort(url.scheme)) url.port = null;
            return url;
          }
          buffer = '';
          if (url.scheme === 'file') {
            state = 'file';
          } else if (isSpecialScheme(url.scheme) && base !== null && base.scheme === url.scheme) {
            state = 'special relative or authority';
          } else if (isSpecialScheme(url.scheme)) {
            state = 'special authority slashes';
          } else if (remainingStartsWith(p, 0x2f)) {
            state = 'path or authority';
            p++;
          } else {
            url.path = '';
            state = 'opaque path';
          }
        } else if (stateOverride === undefined) {
          buffer = '';
          state = 'no scheme';
          p = -1;
        } else {
          return null;
        }
        break;

      case 'no scheme':
        if (base === null || (typeof base.path === 'string' && ch !== 0x23)) return null;
        if (typeof base.path === 'string' && ch === 0x23) {
          url.scheme = base.scheme;
          url.path = base.path;
          url.query = base.query;
          url.fragment = '';
          state = 'fragment';
        } else if (base.scheme !== 'file') {
          state = 'relative';
          p--;
        } else {
          state = 'file';
          p--;
        }
        break;

      case 'special relative or authority':
        if (ch === 0x2f && remainingStartsWith(p, 0x2f)) {
          state = 'special authority ignore slashes';
          p++;
        } else {
          state = 'relative';
          p--;
        }
        break;

      case 'path or authority':
        if (ch === 0x2f) state = 'authority';
        else { state = 'path'; p--; }
        break;

      case 'relative': {
        const from = base as UrlRecord;
        url.scheme = from.scheme;
        if (ch === 0x2f) {
          state = 'relative slash';
        } else if (isSpecialScheme(url.scheme) && ch === 0x5c) {
          state = 'relative slash';
        } else {
          url.username = from.username;
          url.password = from.password;
          url.host = from.host;
          url.port = from.port;
          url.path = ArrayPrototypeSlice(from.path as string[]);
          url.query = from.query;
          if (ch === 0x3f) {
            url.query = '';
            state = 'query';
          } else if (ch === 0x23) {
            url.fragment = '';
            state = 'fragment';
          } else if (ch !== EOF) {
            url.query = null;
            shortenPath(url);
            state = 'path';
            p--;
          }
        }
        break;
      }

      case 'relative slash':
        if (isSpecialScheme(url.scheme) && (ch === 0x2f || ch === 0x5c)) {
          state = 'special authority ignore slashes';
        } else if (ch === 0x2f) {
          state = 'authority';
        } else {
          const from = base as UrlRecord;
          url.username = from.username;
          url.password = from.password;
          url.host = from.host;
          url.port = from.port;
          state = 'path';
          p--;
        }
        break;

      case 'special authority slashes':
        if (ch === 0x2f && remainingStartsWith(p, 0x2f)) {
          state = 'special authority ignore slashes';
          p++;
        } else {
          state = 'special authority ignore slashes';
          p--;
        }
        break;

      case 'special authority ignore slashes':
        if (ch !== 0x2f && ch !== 0x5c) {
          state = 'authority';
          p--;
        }
        break;

      case 'authority':
        if (ch === 0x40) {
          if (atSignSeen) buffer = '%40' + buffer;
          atSignSeen = true;
          const points = codePoints(buffer);
          for (let i = 0; i < points.length; i++) {
            const point = points[i] as number;
            if (point === 0x3a && !passwordTokenSeen) {
              passwordTokenSeen = true;
              continue;
            }
            const encoded = percentEncode(point, isUserinfoSet);
            if (passwordTokenSeen) url.password += encoded;
            else url.username += encoded;
          }
          buffer = '';
        } else if (ch === EOF || ch === 0x2f || ch === 0x3f || ch === 0x23 || (special && ch === 0x5c)) {
          if (atSignSeen && buffer === '') return null;
          p -= codePoints(buffer).length + 1;
          buffer = '';
          state = 'host';
        } else {
          buffer += StringFromCodePoint(ch);
        }
        break;

      case 'host':
      case 'hostname':
        if (stateOverride !== undefined && url.scheme === 'file') {
          p--;
          state = 'file host';
        } else if (ch === 0x3a && !insideBrackets) {
          if (buffer === '') return null;
          if (stateOverride === 'hostname') return url;
          const host = parseHost(buffer, !special);
          if (host === null) return null;
          url.host = host;
          buffer = '';
          state = 'port';
        } else if (ch === EOF || ch === 0x2f || ch === 0x3f || ch === 0x23 || (special && ch === 0x5c)) {
          p--;
          if (special && buffer === '') return null;
          if (stateOverride !== undefined && buffer === '' && (hasCredentials(url) || url.port !== null)) return url;
          const host = parseHost(buffer, !special);
          if (host === null) return null;
          url.host = host;
          buffer = '';
          state = 'path start';
          if (stateOverride !== undefined) return url;
        } else {
          if (ch === 0x5b) insideBrackets = true;
          if (ch === 0x5d) insideBrackets = false;
          buffer += StringFromCodePoint(ch);
        }
        break;

      case 'port':
        if (isAsciiDigit(ch)) {
          buffer += StringFromCodePoint(ch);
        } else if (ch === EOF || ch === 0x2f || ch === 0x3f || ch === 0x23 || (special && ch === 0x5c) || stateOverride !== undefined) {
          if (buffer !== '') {
            let port = 0;
            for (let i = 0; i < buffer.length; i++) {
              port = port * 10 + (StringPrototypeCharCodeAt(buffer, i) - 0x30);
              if (port > 65535) return null;
            }
            url.port = port === defaultPort(url.scheme) ? null : port;
            buffer = '';
            if (stateOverride !== undefined) return url;
          }
          if (stateOverride !== undefined) return null;
          state = 'path start';
          p--;
        } else {
          return null;
        }
        break;

      case 'file':
        url.scheme = 'file';
        url.host = '';
        if (ch === 0x2f || ch === 0x5c) {
          state = 'file slash';
        } else if (base !== null && base.scheme === 'file') {
          url.host = base.host;
          url.path = ArrayPrototypeSlice(base.path as string[]);
          url.query = base.query;
          if (ch === 0x3f) {
            url.query = '';
            state = 'query';
          } else if (ch === 0x23) {
            url.fragment = '';
            state = 'fragment';
          } else if (ch !== EOF) {
            url.query = null;
            if (!startsWithWindowsDriveLetter(c, p)) shortenPath(url);
            else url.path = [];
            state = 'path';
            p--;
          }
        } else {
          state = 'path';
          p--;
        }
        break;

      case 'file slash':
        if (ch === 0x2f || ch === 0x5c) {
          state = 'file host';
        } else {
          if (base !== null && base.scheme === 'file') {
            url.host = base.host;
            const first = (base.path as string[])[0];
            if (!startsWithWindowsDriveLetter(c, p) && first !== undefined && isWindowsDriveLetter(first, true)) {
              push(url.path as string[], first);
            }
          }
          state = 'path';
          p--;
        }
        break;

      case 'file host':
        if (ch === EOF || ch === 0x2f || ch === 0x5c || ch === 0x3f || ch === 0x23) {
          p--;
          if (stateOverride === undefined && isWindowsDriveLetter(buffer)) {
            state = 'path';
          } else if (buffer === '') {
            url.host = '';
            if (stateOverride !== undefined) return url;
            state = 'path start';
          } else {
            let host = parseHost(buffer, !special);
            if (host === null) return null;
            if (host === 'localhost') host = '';
            url.host = host;
            if (stateOverride !== undefined) return url;
            buffer = '';
            state = 'path start';
          }
        } else {
          buffer += StringFromCodePoint(ch);
        }
        break;

      case 'path start':
        if (special) {
          state = 'path';
          if (ch !== 0x2f && ch !== 0x5c) p--;
        } else if (stateOverride === undefined && ch === 0x3f) {
          url.query = '';
          state = 'query';
        } else if (stateOverride === undefined && ch === 0x23) {
          url.fragment = '';
          state = 'fragment';
        } else if (ch !== EOF) {
          state = 'path';
          if (ch !== 0x2f) p--;
        } else if (stateOverride !== undefined && url.host === null) {
          push(url.path as string[], '');
        }
        break;

      case 'path':
        if (ch === EOF || ch === 0x2f || (special && ch === 0x5c) || (stateOverride === undefined && (ch === 0x3f || ch === 0x23))) {
          const slash = ch === 0x2f || (special && ch === 0x5c);
          const path = url.path as string[];
          if (isDoubleDot(buffer)) {
            shortenPath(url);
            if (!slash) push(path, '');
          } else if (isSingleDot(buffer) && !slash) {
            push(path, '');
          } else if (!isSingleDot(buffer)) {
            if (url.scheme === 'file' && path.length === 0 && isWindowsDriveLetter(buffer)) {
              buffer = StringPrototypeSlice(buffer, 0, 1) + ':';
            }
            push(path, buffer);
          }
          buffer = '';
          if (ch === 0x3f) {
            url.query = '';
            state = 'query';
          }
          if (ch === 0x23) {
            url.fragment = '';
            state = 'fragment';
          }
        } else {
          buffer += percentEncode(ch, isPathSet);
        }
        break;

      case 'opaque path':
        if (ch === 0x3f) {
          url.query = '';
          state = 'query';
        } else if (ch === 0x23) {
          url.fragment = '';
          state = 'fragment';
        } else if (ch !== EOF) {
          url.path = (url.path as string) + percentEncode(ch, isC0Control);
        }
        break;

      case 'query':
        if ((stateOverride === undefined && ch === 0x23) || ch === EOF) {
          url.query = (url.query ?? '') + percentEncodeString(buffer, special ? isSpecialQuerySet : isQuerySet);
          buffer = '';
          if (ch === 0x23) {
            url.fragment = '';
            state = 'fragment';
          }
        } else {
          buffer += StringFromCodePoint(ch);
        }
        break;

      case 'fragment':
        if (ch !== EOF) url.fragment = (url.fragment ?? '') + percentEncode(ch, isFragmentSet);
        break;
    }
  }
  return url;
}

function serializePath(url: UrlRecord): string {
  if (typeof url.path === 'string') return url.path;
  let output = '';
  for (let i = 0; i < url.path.length; i++) output += '/' + (url.path[i] as string);
  return output;
}

function serializeUrl(url: UrlRecord, excludeFragment = false): string {
  let output = url.scheme + ':';
  if (url.host !== null) {
    output += '//';
    if (hasCredentials(url)) {
      output += url.username;
      if (url.password !== '') output += ':' + url.password;
      output += '@';
    }
    output += url.host;
    if (url.port !== null) output += ':' + toDOMString(url.port);
  } else if (typeof url.path !== 'string' && url.path.length > 1 && url.path[0] === '') {
    output += '/.';
  }
  output += serializePath(url);
  if (url.query !== null) output += '?' + url.query;
  if (!excludeFragment && url.fragment !== null) output += '#' + url.fragment;
  return output;
}

function cloneRecord(url: UrlRecord): UrlRecord {
  return {
    scheme: url.scheme, username: url.username, password: url.password, host: url.host, port: url.port,
    path: typeof url.path === 'string' ? url.path : ArrayPrototypeSlice(url.path), query: url.query, fragment: url.fragment,
  };
}

function invalidUrl(input: string, base?: string): TypeError {
  return new TypeErrorCtor(base === undefined ? `Invalid URL: '${input}'` : `Invalid URL: '${input}' with base '${base}'`);
}

/** Parses `input` against an optional base; used by fetch/Request so they share the same rules as `new URL`. */
export function parseUrlString(input: string, base?: string): string | null {
  let baseRecord: UrlRecord | null = null;
  if (base !== undefined) {
    baseRecord = basicParse(base, null);
    if (baseRecord === null) return null;
  }
  const record = basicParse(input, baseRecord);
  return record === null ? null : serializeUrl(record);
}

// ---- application/x-www-form-urlencoded ----

function parseFormUrlencoded(input: string): [string, string][] {
  const output: [string, string][] = [];
  let start = 0;
  while (start <= input.length) {
    let end = StringPrototypeIndexOf(input, '&', start);
    if (end === -1) end = input.length;
    const sequence = StringPrototypeSlice(input, start, end);
    start = end + 1;
    if (sequence === '') continue;
    const eq = StringPrototypeIndexOf(sequence, '=');
    let name = eq === -1 ? sequence : StringPrototypeSlice(sequence, 0, eq);
    let value = eq === -1 ? '' : StringPrototypeSlice(sequence, eq + 1);
    name = plusToSpace(name);
    value = plusToSpace(value);
    push(output, [utf8DecodeWithoutBOM(percentDecode(name)), utf8DecodeWithoutBOM(percentDecode(value))]);
  }
  return output;
}

function plusToSpace(input: string): string {
  if (StringPrototypeIndexOf(input, '+') === -1) return input;
  let output = '';
  for (let i = 0; i < input.length; i++) output += input[i] === '+' ? ' ' : (input[i] as string);
  return output;
}

function serializeFormUrlencoded(list: [string, string][]): string {
  let output = '';
  for (let i = 0; i < list.length; i++) {
    const pair = list[i] as [string, string];
    if (i > 0) output += '&';
    output += percentEncodeString(StringPrototypeToWellFormed(pair[0]), isFormSet, true) + '=' +
      percentEncodeString(StringPrototypeToWellFormed(pair[1]), isFormSet, true);
  }
  return output;
}

// ---- the classes ----

const IteratorPrototype = ObjectGetPrototypeOf(ObjectGetPrototypeOf([][SymbolIterator]())) as object;
const SearchParamsIteratorPrototype = ObjectCreate(IteratorPrototype) as object;
ObjectDefineProperty(SearchParamsIteratorPrototype, SymbolToStringTag, { value: 'URLSearchParams Iterator', configurable: true });

let internal = false; // set while the runtime constructs a URLSearchParams bound to a URL
let forUrl: (url: URL, query: string | null) => URLSearchParams;
let replaceList: (params: URLSearchParams, query: string | null) => void;

export class URLSearchParams {
  #list: [string, string][] = [];
  #url: URL | null = null;

  constructor(init: unknown = '') {
    if (internal) return;
    if (typeof init === 'object' && init !== null) {
      if (init instanceof URLSearchParams) {
        this.#list = ArrayPrototypeSlice(init.#list);
        for (let i = 0; i < this.#list.length; i++) {
          const pair = this.#list[i] as [string, string];
          this.#list[i] = [pair[0], pair[1]];
        }
        return;
      }
      const iteratorMethod = (init as { [SymbolIterator]?: unknown })[SymbolIterator];
      if (typeof iteratorMethod === 'function') {
        for (const pair of init as Iterable<unknown>) {
          const items: unknown[] = [];
          if (typeof pair !== 'object' || pair === null) throw new TypeErrorCtor('Item in parameter 1 is not iterable');
          for (const item of pair as Iterable<unknown>) push(items, item);
          if (items.length !== 2) throw new TypeErrorCtor('Expected 2 items in a URLSearchParams init pair');
          push(this.#list, [toDOMString(items[0]), toDOMString(items[1])]);
        }
        return;
      }
      const keys = ObjectKeys(init);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        push(this.#list, [key, toDOMString((init as Record<string, unknown>)[key])]);
      }
      return;
    }
    let text = toDOMString(init);
    if (text[0] === '?') text = StringPrototypeSlice(text, 1);
    this.#list = parseFormUrlencoded(text);
  }

  static {
    // The searchParams object of a URL, kept in sync with its query.
    forUrl = (url: URL, query: string | null): URLSearchParams => {
      internal = true;
      let params: URLSearchParams;
      try {
        params = new URLSearchParams();
      } finally {
        internal = false;
      }
      params.#url = url;
      params.#list = query === null ? [] : parseFormUrlencoded(query);
      return params;
    };
    replaceList = (params: URLSearchParams, query: string | null): void => {
      params.#list = query === null ? [] : parseFormUrlencoded(query);
    };
  }

  #update(): void {
    if (this.#url === null) return;
    const serialized = serializeFormUrlencoded(this.#list);
    setQuery(this.#url, serialized === '' ? null : serialized);
  }

  get size(): number { return this.#list.length; }

  append(name: string, value: string): void {
    push(this.#list, [toDOMString(name), toDOMString(value)]);
    this.#update();
  }

  delete(name: string, value?: string): void {
    const key = toDOMString(name);
    const match = value === undefined ? undefined : toDOMString(value);
    for (let i = 0; i < this.#list.length;) {
      const pair = this.#list[i] as [string, string];
      if (pair[0] === key && (match === undefined || pair[1] === match)) ArrayPrototypeSplice(this.#list, i, 1);
      else i++;
    }
    this.#update();
  }

  get(name: string): string | null {
    const key = toDOMString(name);
    for (let i = 0; i < this.#list.length; i++) if ((this.#list[i] as [string, string])[0] === key) return (this.#list[i] as [string, string])[1];
    return null;
  }

  getAll(name: string): string[] {
    const key = toDOMString(name);
    const values: string[] = [];
    for (let i = 0; i < this.#list.length; i++) if ((this.#list[i] as [string, string])[0] === key) push(values, (this.#list[i] as [string, string])[1]);
    return values;
  }

  has(name: string, value?: string): boolean {
    const key = toDOMString(name);
    const match = value === undefined ? undefined : toDOMString(value);
    for (let i = 0; i < this.#list.length; i++) {
      const pair = this.#list[i] as [string, string];
      if (pair[0] === key && (match === undefined || pair[1] === match)) return true;
    }
    return false;
  }

  set(name: string, value: string): void {
    const key = toDOMString(name);
    let found = false;
    for (let i = 0; i < this.#list.length;) {
      const pair = this.#list[i] as [string, string];
      if (pair[0] !== key) { i++; continue; }
      if (found) { ArrayPrototypeSplice(this.#list, i, 1); continue; }
      found = true;
      this.#list[i] = [key, toDOMString(value)];
      i++;
    }
    if (!found) push(this.#list, [key, toDOMString(value)]);
    this.#update();
  }

  sort(): void {
    // A stable insertion sort by UTF-16 code units of the name.
    const list = this.#list;
    for (let i = 1; i < list.length; i++) {
      const current = list[i] as [string, string];
      let j = i - 1;
      while (j >= 0 && (list[j] as [string, string])[0] > current[0]) {
        list[j + 1] = list[j] as [string, string];
        j--;
      }
      list[j + 1] = current;
    }
    this.#update();
  }

  forEach(callback: (value: string, key: string, parent: URLSearchParams) => void, thisArg?: unknown): void {
    if (typeof callback !== 'function') throw new TypeErrorCtor("Failed to execute 'forEach' on 'URLSearchParams': parameter 1 is not of type 'Function'.");
    for (let i = 0; i < this.#list.length; i++) {
      const pair = this.#list[i] as [string, string];
      ReflectApply(callback, thisArg, [pair[1], pair[0], this]);
    }
  }

  #iterate<T>(project: (pair: [string, string]) => T): IterableIterator<T> {
    const list = (): [string, string][] => this.#list;
    let index = 0;
    const iterator = ObjectCreate(SearchParamsIteratorPrototype) as IterableIterator<T>;
    ObjectDefineProperty(iterator, 'next', {
      value: (): IteratorResult<T> => {
        const current = list();
        if (index >= current.length) return { value: undefined, done: true };
        const pair = current[index++] as [string, string];
        return { value: project(pair), done: false };
      },
      writable: true, configurable: true,
    });
    return iterator;
  }

  keys(): IterableIterator<string> { return this.#iterate((pair) => pair[0]); }
  values(): IterableIterator<string> { return this.#iterate((pair) => pair[1]); }
  entries(): IterableIterator<[string, string]> { return this.#iterate((pair) => [pair[0], pair[1]]); }
  [SymbolIterator](): IterableIterator<[string, string]> { return this.entries(); }

  toString(): string {
    return serializeFormUrlencoded(this.#list);
  }

  // Deno shows the pairs the way it shows a Map's entries.
  /**
   * Every pair, repeated names included, as Deno shows them: `URLSearchParams { "a" => "1", "a" => "2" }`;
   * past `breakLength - 20` characters one pair a line, the closing brace on the last one.
   */
  [customInspect](inspect: InspectFunction, options?: { breakLength?: number }): string {
    const entries: string[] = [];
    let length = -2;
    for (let i = 0; i < this.#list.length; i++) {
      const pair = this.#list[i] as [string, string];
      const entry = `${inspect(pair[0])} => ${inspect(pair[1])}`;
      push(entries, entry);
      length += entry.length + 2;
    }
    if (entries.length === 0) return 'URLSearchParams {}';
    const breakLength = typeof options?.breakLength === 'number' ? options.breakLength : 80;
    if (length > breakLength - 20) return `URLSearchParams {\n  ${ArrayPrototypeJoin(entries, ',\n  ')} }`;
    return `URLSearchParams { ${ArrayPrototypeJoin(entries, ', ')} }`;
  }
}
ObjectDefineProperty(URLSearchParams.prototype, SymbolToStringTag, { value: 'URLSearchParams', configurable: true });

/** Strips trailing spaces from an opaque path once it has neither query nor fragment (the URL standard's rule). */
function stripTrailingSpacesFromOpaquePath(url: UrlRecord): void {
  if (typeof url.path !== 'string' || url.fragment !== null || url.query !== null) return;
  let end = url.path.length;
  while (end > 0 && StringPrototypeCharCodeAt(url.path, end - 1) === 0x20) end--;
  url.path = StringPrototypeSlice(url.path, 0, end);
}

let setQuery: (url: URL, query: string | null) => void;

export class URL {
  #record: UrlRecord;
  #searchParams: URLSearchParams;

  constructor(url: string | URL, base?: string | URL) {
    if (arguments.length === 0) throw new TypeErrorCtor("Failed to construct 'URL': 1 argument required, but only 0 present.");
    const input = toDOMString(url);
    let baseRecord: UrlRecord | null = null;
    const baseText = base === undefined ? undefined : toDOMString(base);
    if (baseText !== undefined) {
      baseRecord = basicParse(baseText, null);
      if (baseRecord === null) throw invalidUrl(input, baseText);
    }
    const record = basicParse(input, baseRecord);
    if (record === null) throw invalidUrl(input, baseText);
    this.#record = record;
    this.#searchParams = forUrl(this, record.query);
  }

  static {
    setQuery = (url: URL, query: string | null): void => {
      url.#record.query = query;
      if (query === null) stripTrailingSpacesFromOpaquePath(url.#record);
    };
  }

  static parse(url: string | URL, base?: string | URL): URL | null {
    try {
      return base === undefined ? new URL(url) : new URL(url, base);
    } catch {
      return null;
    }
  }

  static canParse(url: string | URL, base?: string | URL): boolean {
    return URL.parse(url, base) !== null;
  }

  get href(): string { return serializeUrl(this.#record); }
  set href(value: string) {
    const record = basicParse(toDOMString(value), null);
    if (record === null) throw invalidUrl(toDOMString(value));
    this.#record = record;
    replaceList(this.#searchParams, record.query);
  }

  get origin(): string {
    const url = this.#record;
    if (url.scheme === 'blob' && typeof url.path === 'string') {
      const inner = basicParse(url.path, null);
      if (inner !== null && (inner.scheme === 'http' || inner.scheme === 'https')) return serializeOrigin(inner);
      return 'null';
    }
    if (isSpecialScheme(url.scheme) && url.scheme !== 'file') return serializeOrigin(url);
    return 'null';
  }

  get protocol(): string { return this.#record.scheme + ':'; }
  set protocol(value: string) { basicParse(`${value}:`, null, this.#record, 'scheme start'); }

  get username(): string { return this.#record.username; }
  set username(value: string) {
    if (cannotHaveCredentialsOrPort(this.#record)) return;
    this.#record.username = percentEncodeString(toDOMString(value), isUserinfoSet);
  }

  get password(): string { return this.#record.password; }
  set password(value: string) {
    if (cannotHaveCredentialsOrPort(this.#record)) return;
    this.#record.password = percentEncodeString(toDOMString(value), isUserinfoSet);
  }

  get host(): string {
    const url = this.#record;
    if (url.host === null) return '';
    return url.port === null ? url.host : `${url.host}:${url.port}`;
  }
  set host(value: string) {
    if (typeof this.#record.path === 'string') return;
    this.#applyOverride(toDOMString(value), 'host');
  }

  get hostname(): string { return this.#record.host ?? ''; }
  set hostname(value: string) {
    if (typeof this.#record.path === 'string') return;
    this.#applyOverride(toDOMString(value), 'hostname');
  }

  get port(): string { return this.#record.port === null ? '' : toDOMString(this.#record.port); }
  set port(value: string) {
    if (cannotHaveCredentialsOrPort(this.#record)) return;
    const text = toDOMString(value);
    if (text === '') this.#record.port = null;
    else this.#applyOverride(text, 'port');
  }

  get pathname(): string { return serializePath(this.#record); }
  set pathname(value: string) {
    if (typeof this.#record.path === 'string') return;
    const copy = cloneRecord(this.#record);
    copy.path = [];
    if (basicParse(toDOMString(value), null, copy, 'path start') !== null) this.#record = copy;
  }

  get search(): string {
    const query = this.#record.query;
    return query === null || query === '' ? '' : '?' + query;
  }
  set search(value: string) {
    const text = toDOMString(value);
    if (text === '') {
      this.#record.query = null;
      replaceList(this.#searchParams, null);
      stripTrailingSpacesFromOpaquePath(this.#record);
      return;
    }
    const input = text[0] === '?' ? StringPrototypeSlice(text, 1) : text;
    const copy = cloneRecord(this.#record);
    copy.query = '';
    if (basicParse(input, null, copy, 'query') !== null) {
      this.#record = copy;
      replaceList(this.#searchParams, input);
    }
  }

  get searchParams(): URLSearchParams { return this.#searchParams; }

  get hash(): string {
    const fragment = this.#record.fragment;
    return fragment === null || fragment === '' ? '' : '#' + fragment;
  }
  set hash(value: string) {
    const text = toDOMString(value);
    if (text === '') {
      this.#record.fragment = null;
      stripTrailingSpacesFromOpaquePath(this.#record);
      return;
    }
    const input = text[0] === '#' ? StringPrototypeSlice(text, 1) : text;
    const copy = cloneRecord(this.#record);
    copy.fragment = '';
    if (basicParse(input, null, copy, 'fragment') !== null) this.#record = copy;
  }

  toString(): string { return this.href; }
  toJSON(): string { return this.href; }

  [customInspect](inspect: InspectFunction): string {
    return inspect(named('URL', {
      href: this.href, origin: this.origin, protocol: this.protocol, username: this.username, password: this.password,
      host: this.host, hostname: this.hostname, port: this.port, pathname: this.pathname, hash: this.hash, search: this.search,
    }));
  }

  /** Setters work on a copy so that a failed parse leaves the URL unchanged. */
  #applyOverride(value: string, state: State): void {
    const copy = cloneRecord(this.#record);
    if (basicParse(value, null, copy, state) !== null) this.#record = copy;
  }
}
ObjectDefineProperty(URL.prototype, SymbolToStringTag, { value: 'URL', configurable: true });

function cannotHaveCredentialsOrPort(url: UrlRecord): boolean {
  return url.host === null || url.host === '' || url.scheme === 'file';
}

function serializeOrigin(url: UrlRecord): string {
  return `${url.scheme}://${url.host ?? ''}${url.port === null ? '' : `:${url.port}`}`;
}
