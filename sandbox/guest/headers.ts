/** Headers, with Deno's validation messages, guards, sorted combined iteration and getSetCookie(). */
import type { HttpHeaders } from '../protocol.ts';
import { customInspect, named, type InspectFunction } from './inspect-hook.ts';
import {
  ArrayPrototypeJoin, ArrayPrototypeSplice, ObjectCreate, ObjectDefineProperty, ObjectGetPrototypeOf, ObjectKeys,
  RegExpPrototypeTest, StringPrototypeCharCodeAt, StringPrototypeSlice, StringPrototypeToLowerCase, SymbolIterator,
  SymbolToStringTag, TypeErrorCtor, push, ReflectApply, toDOMString,
} from './primordials.ts';

export type HeadersGuard = 'none' | 'request' | 'response' | 'immutable';
export type HeadersInit = Headers | [string, string][] | Record<string, string>;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function isHttpWhitespace(c: number): boolean {
  return c === 0x09 || c === 0x0a || c === 0x0d || c === 0x20;
}

function normalizeValue(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isHttpWhitespace(StringPrototypeCharCodeAt(value, start))) start++;
  while (end > start && isHttpWhitespace(StringPrototypeCharCodeAt(value, end - 1))) end--;
  return StringPrototypeSlice(value, start, end);
}

function checkName(name: string): string {
  if (!RegExpPrototypeTest(TOKEN, name)) throw new TypeErrorCtor(`Invalid header name: "${name}"`);
  return StringPrototypeToLowerCase(name);
}

function checkValue(value: string): string {
  const normalized = normalizeValue(value);
  for (let i = 0; i < normalized.length; i++) {
    const c = StringPrototypeCharCodeAt(normalized, i);
    if (c === 0 || c === 0x0a || c === 0x0d || c > 0xff) throw new TypeErrorCtor(`Invalid header value: "${normalized}"`);
  }
  return normalized;
}

const IteratorPrototype = ObjectGetPrototypeOf(ObjectGetPrototypeOf([][SymbolIterator]())) as object;
const HeadersIteratorPrototype = ObjectCreate(IteratorPrototype) as object;
ObjectDefineProperty(HeadersIteratorPrototype, SymbolToStringTag, { value: 'Headers Iterator', configurable: true });

export let setGuard: (headers: Headers, guard: HeadersGuard) => void;
let headerList: (headers: Headers) => [string, string][];

export class Headers {
  /** Lower-cased names, in insertion order; duplicates kept (combined on read). */
  #list: [string, string][] = [];
  #guard: HeadersGuard = 'none';

  constructor(init?: HeadersInit | null) {
    if (init !== undefined && init !== null) fillHeaders(this, init);
  }

  static {
    setGuard = (headers: Headers, guard: HeadersGuard): void => { headers.#guard = guard; };
    headerList = (headers: Headers): [string, string][] => headers.#list;
  }

  #checkMutable(): void {
    if (this.#guard === 'immutable') throw new TypeErrorCtor('Headers are immutable.');
  }

  append(name: string, value: string): void {
    const key = checkName(toDOMString(name));
    const checked = checkValue(toDOMString(value));
    this.#checkMutable();
    push(this.#list, [key, checked]);
  }

  delete(name: string): void {
    const key = checkName(toDOMString(name));
    this.#checkMutable();
    for (let i = 0; i < this.#list.length;) {
      if ((this.#list[i] as [string, string])[0] === key) ArrayPrototypeSplice(this.#list, i, 1);
      else i++;
    }
  }

  get(name: string): string | null {
    const key = checkName(toDOMString(name));
    const values: string[] = [];
    for (let i = 0; i < this.#list.length; i++) {
      const pair = this.#list[i] as [string, string];
      if (pair[0] === key) push(values, pair[1]);
    }
    return values.length === 0 ? null : ArrayPrototypeJoin(values, ', ');
  }

  getSetCookie(): string[] {
    const values: string[] = [];
    for (let i = 0; i < this.#list.length; i++) {
      const pair = this.#list[i] as [string, string];
      if (pair[0] === 'set-cookie') push(values, pair[1]);
    }
    return values;
  }

  has(name: string): boolean {
    const key = checkName(toDOMString(name));
    for (let i = 0; i < this.#list.length; i++) if ((this.#list[i] as [string, string])[0] === key) return true;
    return false;
  }

  set(name: string, value: string): void {
    const key = checkName(toDOMString(name));
    const checked = checkValue(toDOMString(value));
    this.#checkMutable();
    let found = false;
    for (let i = 0; i < this.#list.length;) {
      const pair = this.#list[i] as [string, string];
      if (pair[0] !== key) { i++; continue; }
      if (found) { ArrayPrototypeSplice(this.#list, i, 1); continue; }
      this.#list[i] = [key, checked];
      found = true;
      i++;
    }
    if (!found) push(this.#list, [key, checked]);
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    const entries = sortedEntries(this.#list);
    for (let i = 0; i < entries.length; i++) {
      const pair = entries[i] as [string, string];
      ReflectApply(callback, thisArg, [pair[1], pair[0], this]);
    }
  }

  #iterate<T>(project: (pair: [string, string]) => T): IterableIterator<T> {
    const entries = sortedEntries(this.#list);
    let index = 0;
    const iterator = ObjectCreate(HeadersIteratorPrototype) as IterableIterator<T>;
    ObjectDefineProperty(iterator, 'next', {
      value: (): IteratorResult<T> => {
        if (index >= entries.length) return { value: undefined, done: true };
        return { value: project(entries[index++] as [string, string]), done: false };
      },
      writable: true, configurable: true,
    });
    return iterator;
  }

  keys(): IterableIterator<string> { return this.#iterate((pair) => pair[0]); }
  values(): IterableIterator<string> { return this.#iterate((pair) => pair[1]); }
  entries(): IterableIterator<[string, string]> { return this.#iterate((pair) => pair); }
  [SymbolIterator](): IterableIterator<[string, string]> { return this.entries(); }

  [customInspect](inspect: InspectFunction): string {
    const record: Record<string, string> = {};
    const entries = sortedEntries(this.#list);
    for (let i = 0; i < entries.length; i++) {
      const pair = entries[i] as [string, string];
      ObjectDefineProperty(record, pair[0], { value: pair[1], enumerable: true, writable: true, configurable: true });
    }
    return inspect(named('Headers', record));
  }
}
ObjectDefineProperty(Headers.prototype, SymbolToStringTag, { value: 'Headers', configurable: true });

/** The sort-and-combine of the Fetch standard: set-cookie values stay separate. */
function sortedEntries(list: [string, string][]): [string, string][] {
  const names: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const name = (list[i] as [string, string])[0];
    let seen = false;
    for (let j = 0; j < names.length; j++) if (names[j] === name) { seen = true; break; }
    if (!seen) push(names, name);
  }
  for (let i = 1; i < names.length; i++) {
    const current = names[i] as string;
    let j = i - 1;
    while (j >= 0 && (names[j] as string) > current) { names[j + 1] = names[j] as string; j--; }
    names[j + 1] = current;
  }
  const output: [string, string][] = [];
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const values: string[] = [];
    for (let j = 0; j < list.length; j++) {
      const pair = list[j] as [string, string];
      if (pair[0] !== name) continue;
      if (name === 'set-cookie') push(output, [name, pair[1]]);
      else push(values, pair[1]);
    }
    if (values.length > 0) push(output, [name, ArrayPrototypeJoin(values, ', ')]);
  }
  return output;
}

export function fillHeaders(headers: Headers, init: HeadersInit): void {
  if (init instanceof Headers) {
    const list = headerList(init);
    for (let i = 0; i < list.length; i++) {
      const pair = list[i] as [string, string];
      headers.append(pair[0], pair[1]);
    }
    return;
  }
  if (typeof init !== 'object') throw new TypeErrorCtor("Failed to construct 'Headers': The provided value is not of type '(record<ByteString, ByteString> or sequence<sequence<ByteString>>)'.");
  if (typeof (init as { [SymbolIterator]?: unknown })[SymbolIterator] === 'function') {
    for (const pair of init as Iterable<unknown>) {
      const items: unknown[] = [];
      if (typeof pair !== 'object' || pair === null) throw new TypeErrorCtor('Headers init pairs must be sequences.');
      for (const item of pair as Iterable<unknown>) push(items, item);
      if (items.length !== 2) throw new TypeErrorCtor(`Invalid header: length must be 2, but is ${items.length}`);
      headers.append(toDOMString(items[0]), toDOMString(items[1]));
    }
    return;
  }
  const keys = ObjectKeys(init);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    headers.append(key, toDOMString((init as Record<string, string>)[key]));
  }
}

/** The wire form for the bridge: a fresh array of fresh pairs (what the host copies). */
export function headersToWire(headers: Headers): HttpHeaders {
  const list = headerList(headers);
  const output: HttpHeaders = [];
  for (let i = 0; i < list.length; i++) {
    const pair = list[i] as [string, string];
    output[i] = [pair[0], pair[1]];
  }
  return output;
}

export function headersFromWire(wire: unknown, guard: HeadersGuard): Headers {
  const headers = new Headers();
  if (Array.isArray(wire)) {
    for (let i = 0; i < wire.length; i++) {
      const pair = wire[i] as unknown;
      if (!Array.isArray(pair) || pair.length !== 2) continue;
      try {
        headers.append(toDOMString(pair[0]), toDOMString(pair[1]));
      } catch {
        // A header the host accepted but the Headers class would not: drop it rather than fail the response.
      }
    }
  }
  setGuard(headers, guard);
  return headers;
}
