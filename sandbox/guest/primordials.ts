/**
 * Intrinsics captured when the runtime script is evaluated (inside the snapshot), long before any
 * user code runs. Guest runtime code calls these instead of live prototype methods, so a tool that
 * replaces `Array.prototype.push`, `JSON.parse` or `Promise.prototype.then` can neither break the
 * bridge nor intercept the values that flow through it.
 *
 * Rules for code that uses them (the cheap half of Deno's primordials discipline):
 * - no spread, array destructuring or `for...of` over arrays (they call the patchable array iterator);
 * - no `.then` on promises: `PromisePrototypeThen(promise, ...)`, or `await`;
 * - plain-object bookkeeping keyed by untrusted names uses `SafeMap` / null-prototype objects.
 */

/* eslint-disable @typescript-eslint/unbound-method -- detaching intrinsic methods before user code runs is this file's purpose; each is called through ReflectApply with an explicit receiver. */

const { apply: ReflectApply, construct: ReflectConstruct, ownKeys: ReflectOwnKeys, getPrototypeOf: ReflectGetPrototypeOf } = Reflect;

// `(self, ...args)` collects args without iterating; ReflectApply reads them as an array-like.
function uncurryThis<This, Args extends unknown[], Result>(fn: (this: This, ...args: Args) => Result): (self: This, ...args: Args) => Result {
  return (self: This, ...args: Args): Result => ReflectApply(fn, self, args);
}

function getter(proto: object, name: PropertyKey): (self: unknown) => unknown {
  const descriptor = Reflect.getOwnPropertyDescriptor(proto, name);
  const get = descriptor?.get;
  if (get === undefined) throw new TypeError(`no getter ${String(name)}`);
  return (self: unknown): unknown => ReflectApply(get, self, []);
}

export { ReflectApply, ReflectConstruct, ReflectOwnKeys, ReflectGetPrototypeOf };
export const ReflectDefineProperty = Reflect.defineProperty;
export const ReflectDeleteProperty = Reflect.deleteProperty;
export const ReflectGetOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor;
export const ReflectHas = Reflect.has;

export const ObjectCreate = Object.create;
export const ObjectDefineProperty = Object.defineProperty;
export const ObjectDefineProperties = Object.defineProperties;
export const ObjectFreeze = Object.freeze;
export const ObjectGetOwnPropertyNames = Object.getOwnPropertyNames;
export const ObjectGetOwnPropertySymbols = Object.getOwnPropertySymbols;
export const ObjectGetPrototypeOf = Object.getPrototypeOf;
export const ObjectSetPrototypeOf = Object.setPrototypeOf;
export const ObjectKeys = Object.keys;
export const ObjectIs = Object.is;
export const ObjectHasOwn = Object.hasOwn;
export const ObjectPrototype = Object.prototype;
export const ObjectPrototypeToString = uncurryThis(Object.prototype.toString);
export const ObjectPrototypePropertyIsEnumerable = uncurryThis(Object.prototype.propertyIsEnumerable);

export const FunctionPrototypeToString = uncurryThis(Function.prototype.toString);

export const ArrayIsArray = Array.isArray;
export const ArrayPrototypeJoin = uncurryThis(Array.prototype.join);
/** Array.prototype.slice without its species lookup (a tool may redefine Array[Symbol.species]). */
export function ArrayPrototypeSlice<T>(self: readonly T[], start = 0, end = self.length): T[] {
  const out: T[] = [];
  for (let i = start; i < end && i < self.length; i++) push(out, self[i] as T);
  return out;
}
export const ArrayPrototypeIndexOf = uncurryThis(Array.prototype.indexOf as (this: readonly unknown[], value: unknown) => number);
/** Removes one element in place, without splice's species lookup. */
export function ArrayPrototypeSplice(self: unknown[], index: number, _deleteCount: 1): void {
  for (let i = index; i < self.length - 1; i++) ReflectDefineProperty(self, i, { value: self[i + 1], writable: true, enumerable: true, configurable: true });
  self.length--;
}
export const ArrayPrototypeSort = uncurryThis(Array.prototype.sort as (this: unknown[], compare: (a: never, b: never) => number) => unknown[]);

/** Web IDL's DOMString conversion (symbols throw, as `${}` would). Inputs are typed `unknown`: tools pass anything. */
export function toDOMString(value: unknown): string {
  if (typeof value === 'symbol') throw new TypeError('Cannot convert a Symbol value to a string');
  return String(value);
}

export function toBoolean(value: unknown): boolean {
  return Boolean(value);
}

export function toNumber(value: unknown): number {
  return Number(value);
}

/** Appends without Array.prototype.push (which a tool may have replaced). */
export function push<T>(array: T[], value: T): void {
  ReflectDefineProperty(array, array.length, { value, writable: true, enumerable: true, configurable: true });
}

export const StringFromCharCode = String.fromCharCode;
export const StringFromCodePoint = String.fromCodePoint;
export const StringPrototypeCharCodeAt = uncurryThis(String.prototype.charCodeAt);
export const StringPrototypeCodePointAt = uncurryThis(String.prototype.codePointAt);
export const StringPrototypeIndexOf = uncurryThis(String.prototype.indexOf);
export const StringPrototypeLastIndexOf = uncurryThis(String.prototype.lastIndexOf);
export const StringPrototypeSlice = uncurryThis(String.prototype.slice);
export const StringPrototypeToLowerCase = uncurryThis(String.prototype.toLowerCase);
export const StringPrototypeToUpperCase = uncurryThis(String.prototype.toUpperCase);
export const StringPrototypeTrim = uncurryThis(String.prototype.trim);
export const StringPrototypeRepeat = uncurryThis(String.prototype.repeat);
export const StringPrototypePadStart = uncurryThis(String.prototype.padStart);
export const StringPrototypeIncludes = uncurryThis(String.prototype.includes);
export const StringPrototypeStartsWith = uncurryThis(String.prototype.startsWith);
export const StringPrototypeNormalize = uncurryThis(String.prototype.normalize);
export const StringPrototypeToWellFormed = uncurryThis(String.prototype.toWellFormed);
export const StringPrototypeReplace = uncurryThis(String.prototype.replace as (this: string, pattern: RegExp, replacement: string) => string);

export const RegExpPrototypeTest = uncurryThis(RegExp.prototype.test);
export const RegExpPrototypeExec = uncurryThis(RegExp.prototype.exec);
export const RegExpPrototypeGetSource = getter(RegExp.prototype, 'source') as (self: RegExp) => string;
export const RegExpPrototypeGetFlags = getter(RegExp.prototype, 'flags') as (self: RegExp) => string;

export const NumberIsFinite = Number.isFinite;
export const NumberIsInteger = Number.isInteger;
export const NumberIsNaN = Number.isNaN;
export const NumberPrototypeToString = uncurryThis(Number.prototype.toString);
export const MathFloor = Math.floor;
export const MathMax = Math.max;
export const MathMin = Math.min;
export const MathTrunc = Math.trunc;
export const BigIntPrototypeToString = uncurryThis(BigInt.prototype.toString);
export const SymbolPrototypeToString = uncurryThis(Symbol.prototype.toString);
export const SymbolPrototypeValueOf = uncurryThis(Symbol.prototype.valueOf);
export const BigIntPrototypeValueOf = uncurryThis(BigInt.prototype.valueOf);
export const SymbolPrototypeGetDescription = getter(Symbol.prototype, 'description') as (self: symbol) => string | undefined;
export const SymbolIterator: typeof Symbol.iterator = Symbol.iterator;
export const SymbolAsyncIterator: typeof Symbol.asyncIterator = Symbol.asyncIterator;
export const SymbolToStringTag: typeof Symbol.toStringTag = Symbol.toStringTag;
export const SymbolToPrimitive: typeof Symbol.toPrimitive = Symbol.toPrimitive;
// Symbol.dispose is ES2026; V8 in Node 24 has it, the es2024 lib does not know it.
export const SymbolDispose = (Symbol as unknown as { dispose?: symbol }).dispose ?? Symbol.for('Symbol.dispose');
export const SymbolFor = Symbol.for;
export const BooleanPrototypeValueOf = uncurryThis(Boolean.prototype.valueOf);
export const StringPrototypeValueOf = uncurryThis(String.prototype.valueOf);
export const NumberPrototypeValueOf = uncurryThis(Number.prototype.valueOf);

export const JSONParse = JSON.parse;
// Typed honestly: stringify returns undefined for undefined, functions and symbols.
export const JSONStringify = JSON.stringify as (value: unknown) => string | undefined;

export const DatePrototypeGetTime = uncurryThis(Date.prototype.getTime);
export const DatePrototypeToISOString = uncurryThis(Date.prototype.toISOString);
export const DateNow = Date.now;
export const DateCtor = Date;

export const ErrorCaptureStackTrace = (Error as unknown as { captureStackTrace?: (target: object, ctor?: unknown) => void }).captureStackTrace;

export const SafeMap = makeSafe(Map);
export const SafeSet = makeSafe(Set);
export const SafeWeakMap = makeSafe(WeakMap);
export const SafeWeakSet = makeSafe(WeakSet);
export const MapPrototypeGet = uncurryThis(Map.prototype.get as (this: Map<unknown, unknown>, key: unknown) => unknown) as <K, V>(self: Map<K, V>, key: K) => V | undefined;
export const MapPrototypeSet = uncurryThis(Map.prototype.set as (this: Map<unknown, unknown>, key: unknown, value: unknown) => Map<unknown, unknown>) as <K, V>(self: Map<K, V>, key: K, value: V) => Map<K, V>;
export const MapPrototypeHas = uncurryThis(Map.prototype.has as (this: Map<unknown, unknown>, key: unknown) => boolean) as <K, V>(self: Map<K, V>, key: K) => boolean;
export const MapPrototypeDelete = uncurryThis(Map.prototype.delete as (this: Map<unknown, unknown>, key: unknown) => boolean) as <K, V>(self: Map<K, V>, key: K) => boolean;
export const MapPrototypeForEach = uncurryThis(Map.prototype.forEach as (this: Map<unknown, unknown>, fn: (value: unknown, key: unknown) => void) => void) as
  <K, V>(self: Map<K, V>, fn: (value: V, key: K) => void) => void;
export const MapPrototypeClear: <K, V>(self: Map<K, V>) => void = uncurryThis(Map.prototype.clear);
export const MapPrototypeGetSize = getter(Map.prototype, 'size') as (self: Map<unknown, unknown>) => number;
export const SetPrototypeAdd = uncurryThis(Set.prototype.add as (this: Set<unknown>, value: unknown) => Set<unknown>) as <T>(self: Set<T>, value: T) => Set<T>;
export const SetPrototypeHas = uncurryThis(Set.prototype.has as (this: Set<unknown>, value: unknown) => boolean) as <T>(self: Set<T>, value: T) => boolean;
export const SetPrototypeDelete = uncurryThis(Set.prototype.delete as (this: Set<unknown>, value: unknown) => boolean) as <T>(self: Set<T>, value: T) => boolean;
export const SetPrototypeForEach = uncurryThis(Set.prototype.forEach as (this: Set<unknown>, fn: (value: unknown) => void) => void) as
  <T>(self: Set<T>, fn: (value: T) => void) => void;
export const SetPrototypeGetSize = getter(Set.prototype, 'size') as (self: Set<unknown>) => number;
export const WeakMapPrototypeGet = uncurryThis(WeakMap.prototype.get as (this: WeakMap<object, unknown>, key: object) => unknown) as
  <K extends object, V>(self: WeakMap<K, V>, key: K) => V | undefined;
export const WeakMapPrototypeSet = uncurryThis(WeakMap.prototype.set as (this: WeakMap<object, unknown>, key: object, value: unknown) => WeakMap<object, unknown>) as
  <K extends object, V>(self: WeakMap<K, V>, key: K, value: V) => WeakMap<K, V>;
export const WeakMapPrototypeHas = uncurryThis(WeakMap.prototype.has);

export const PromiseCtor = Promise;
export const PromiseResolve = Promise.resolve.bind(Promise) as <T>(value: T) => Promise<Awaited<T>>;
export const PromiseReject = Promise.reject.bind(Promise) as (reason: unknown) => Promise<never>;
export const PromisePrototypeThen = uncurryThis(Promise.prototype.then as (this: Promise<unknown>, onFulfilled?: (value: never) => unknown, onRejected?: (reason: unknown) => unknown) => Promise<unknown>) as
  <T, R = T>(self: Promise<T>, onFulfilled?: (value: T) => R | PromiseLike<R>, onRejected?: (reason: unknown) => R | PromiseLike<R>) => Promise<R>;

/** A promise plus its settle functions, made without touching any patchable method. */
export function withResolvers<T>(): { promise: Promise<T>; resolve: (value: T | PromiseLike<T>) => void; reject: (reason: unknown) => void } {
  let resolve!: (value: T | PromiseLike<T>) => void;
  let reject!: (reason: unknown) => void;
  const promise = new PromiseCtor<T>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

export const ArrayBufferCtor = ArrayBuffer;
export const ArrayBufferIsView = ArrayBuffer.isView;
export const ArrayBufferPrototypeGetByteLength = getter(ArrayBuffer.prototype, 'byteLength') as (self: ArrayBuffer) => number;
export const ArrayBufferPrototypeGetMaxByteLength = getter(ArrayBuffer.prototype, 'maxByteLength') as (self: ArrayBuffer) => number;
export const ArrayBufferPrototypeGetResizable = getter(ArrayBuffer.prototype, 'resizable') as (self: ArrayBuffer) => boolean;
export const ArrayBufferPrototypeGetDetached = getter(ArrayBuffer.prototype, 'detached') as (self: ArrayBuffer) => boolean;
export const ArrayBufferPrototypeTransfer: (self: ArrayBuffer) => ArrayBuffer = uncurryThis(ArrayBuffer.prototype.transfer);
/** A copy of an ArrayBuffer, without slice's species lookup. */
export function ArrayBufferPrototypeSlice(self: ArrayBuffer, start: number, end: number): ArrayBuffer {
  const copy = new ArrayBuffer(end - start);
  TypedArrayPrototypeSet(new Uint8Array(copy), new Uint8Array(self, start, end - start), 0);
  return copy;
}
export const Uint8ArrayCtor = Uint8Array;
const TypedArrayPrototype = ReflectGetPrototypeOf(Uint8Array.prototype) as object;
export const TypedArrayPrototypeGetBuffer = getter(TypedArrayPrototype, 'buffer') as (self: ArrayBufferView) => ArrayBufferLike;
export const TypedArrayPrototypeGetByteOffset = getter(TypedArrayPrototype, 'byteOffset') as (self: ArrayBufferView) => number;
export const TypedArrayPrototypeGetByteLength = getter(TypedArrayPrototype, 'byteLength') as (self: ArrayBufferView) => number;
export const TypedArrayPrototypeGetLength = getter(TypedArrayPrototype, 'length') as (self: ArrayBufferView) => number;
export const TypedArrayPrototypeGetSymbolToStringTag = getter(TypedArrayPrototype, Symbol.toStringTag) as (self: unknown) => string | undefined;
export const TypedArrayPrototypeSet: (self: Uint8Array, source: ArrayLike<number>, offset?: number) => void = uncurryThis(Uint8Array.prototype.set);
/** A copy of part of a byte array, without the species lookup of %TypedArray%.prototype.slice. */
export function TypedArrayPrototypeSlice(self: Uint8Array, start: number, end: number): Uint8Array {
  const length = end > start ? end - start : 0;
  const copy = new Uint8Array(length);
  TypedArrayPrototypeSet(copy, new Uint8Array(TypedArrayPrototypeGetBuffer(self) as ArrayBuffer, TypedArrayPrototypeGetByteOffset(self) + start, length), 0);
  return copy;
}
export const Uint16ArrayCtor = Uint16Array;
/** A view of part of a typed array, without the species lookup of subarray. */
export function TypedArrayPrototypeSubarray<T extends Uint8Array | Uint16Array>(self: T, start: number, end: number): T {
  const Ctor = (self instanceof Uint16Array ? Uint16Array : Uint8Array) as unknown as new (buffer: ArrayBuffer, offset: number, length: number) => T;
  const size = self instanceof Uint16Array ? 2 : 1;
  return new Ctor(TypedArrayPrototypeGetBuffer(self) as ArrayBuffer, TypedArrayPrototypeGetByteOffset(self) + start * size, end > start ? end - start : 0);
}
export const DataViewPrototypeGetBuffer = getter(DataView.prototype, 'buffer') as (self: DataView) => ArrayBufferLike;
export const DataViewPrototypeGetByteOffset = getter(DataView.prototype, 'byteOffset') as (self: DataView) => number;
export const DataViewPrototypeGetByteLength = getter(DataView.prototype, 'byteLength') as (self: DataView) => number;

export const ErrorCtor = Error;
export const TypeErrorCtor = TypeError;
export const RangeErrorCtor = RangeError;
export const SyntaxErrorCtor = SyntaxError;
export const globalThisRef = globalThis;

/**
 * A subclass whose prototype methods are the captured originals, so internal bookkeeping
 * (`new SafeMap()`, `map.get(k)`) is immune to patches of Map.prototype.
 */
function makeSafe<C extends new (...args: never[]) => object>(Base: C): C {
  const Safe = class extends (Base as unknown as new () => object) {} as unknown as C;
  const source = Base.prototype as object;
  const target = Safe.prototype as object;
  const keys = ReflectOwnKeys(source);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as PropertyKey;
    if (key === 'constructor') continue;
    const descriptor = Reflect.getOwnPropertyDescriptor(source, key);
    if (descriptor !== undefined) Reflect.defineProperty(target, key, descriptor);
  }
  Object.freeze(target);
  return Safe;
}
