/**
 * structuredClone for the serializable types of the HTML standard; cycles and shared references are
 * kept, and ArrayBuffers in `transfer` are detached, as in Deno.
 */
import { DOMException } from './errors.ts';
import {
  ArrayBufferIsView, ArrayBufferPrototypeGetByteLength, ArrayBufferPrototypeGetDetached, ArrayBufferPrototypeGetMaxByteLength,
  ArrayBufferPrototypeGetResizable, ArrayBufferPrototypeSlice, ArrayBufferPrototypeTransfer, ArrayIsArray, ReflectApply,
  SymbolIterator, TypedArrayPrototypeSet, push,
  BigIntPrototypeToString, BooleanPrototypeValueOf, DataViewPrototypeGetBuffer, DataViewPrototypeGetByteLength,
  DataViewPrototypeGetByteOffset, DatePrototypeGetTime, FunctionPrototypeToString, MapPrototypeForEach,
  MapPrototypeGet, MapPrototypeSet, NumberPrototypeValueOf, ObjectKeys, ObjectPrototypeToString,
  RegExpPrototypeGetFlags, RegExpPrototypeGetSource, SafeMap, SetPrototypeAdd, SetPrototypeForEach,
  StringPrototypeValueOf, SymbolPrototypeToString, TypedArrayPrototypeGetBuffer, TypedArrayPrototypeGetByteOffset,
  TypedArrayPrototypeGetLength, TypedArrayPrototypeGetSymbolToStringTag, ObjectDefineProperty, ObjectHasOwn,
  StringPrototypeSlice, toDOMString,
} from './primordials.ts';

const ERROR_CONSTRUCTORS: Readonly<Record<string, ErrorConstructor>> = {
  __proto__: null, Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError,
} as unknown as Record<string, ErrorConstructor>;

type TypedArrayConstructor = new (buffer: ArrayBuffer, byteOffset: number, length: number) => ArrayBufferView;
const TYPED_ARRAYS: Readonly<Record<string, TypedArrayConstructor>> = {
  __proto__: null, Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
  Float32Array, Float64Array, BigInt64Array, BigUint64Array,
} as unknown as Record<string, TypedArrayConstructor>;

function notCloneable(what: string): DOMException {
  return new DOMException(`${what} could not be cloned.`, 'DataCloneError');
}

function define(target: object, key: PropertyKey, value: unknown): void {
  ObjectDefineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Whether `value` is an ArrayBuffer (not a SharedArrayBuffer), by its internal slot rather than its tag. */
function isArrayBuffer(value: unknown): value is ArrayBuffer {
  try {
    ArrayBufferPrototypeGetByteLength(value as ArrayBuffer);
    return true;
  } catch {
    return false;
  }
}

/** A copy of an ArrayBuffer that keeps a resizable buffer resizable, as V8's serializer does. */
function copyArrayBuffer(buffer: ArrayBuffer): ArrayBuffer {
  const length = ArrayBufferPrototypeGetByteLength(buffer);
  if (!ArrayBufferPrototypeGetResizable(buffer)) return ArrayBufferPrototypeSlice(buffer, 0, length);
  const copy = new ArrayBuffer(length, { maxByteLength: ArrayBufferPrototypeGetMaxByteLength(buffer) });
  TypedArrayPrototypeSet(new Uint8Array(copy), new Uint8Array(buffer, 0, length), 0);
  return copy;
}

/** The `transfer` option as a list, checked as Deno checks it (detached buffers first). */
function transferList(options: unknown): unknown[] {
  if (options === undefined || options === null) return [];
  if (typeof options !== 'object' && typeof options !== 'function') {
    throw new TypeError("Failed to execute 'structuredClone': Argument 2 can not be converted to a dictionary");
  }
  const transfer = (options as { transfer?: unknown }).transfer;
  if (transfer === undefined) return [];
  const iteratorMethod: unknown = typeof transfer === 'object' && transfer !== null ? (transfer as Record<symbol, unknown>)[SymbolIterator] : undefined;
  if (typeof iteratorMethod !== 'function') {
    throw new TypeError("Failed to execute 'structuredClone': 'transfer' of 'StructuredSerializeOptions' (Argument 2) can not be converted to sequence.");
  }
  const iterator: unknown = ReflectApply(iteratorMethod, transfer, []);
  const next = (iterator as { next: (this: unknown) => IteratorResult<unknown> }).next;
  const list: unknown[] = [];
  for (;;) {
    const step: IteratorResult<unknown> = ReflectApply(next, iterator, []);
    if (step.done === true) break;
    push(list, step.value);
  }
  let buffers = 0;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (!isArrayBuffer(item)) continue;
    if (ArrayBufferPrototypeGetDetached(item)) throw new DOMException(`ArrayBuffer at index ${buffers} is already detached`, 'DataCloneError');
    buffers++;
  }
  return list;
}

export function structuredClone<T>(value: T, options?: unknown): T {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'structuredClone': 1 argument required, but only 0 present.");
  const transfer = transferList(options);
  const memory = new SafeMap<object, unknown>();
  try {
    for (let i = 0; i < transfer.length; i++) {
      const item = transfer[i];
      if (!isArrayBuffer(item)) throw new DOMException('Value not transferable', 'DataCloneError');
      if (MapPrototypeGet(memory, item) === undefined) MapPrototypeSet(memory, item, copyArrayBuffer(item));
    }
    return cloneValue(value, memory);
  } finally {
    // Deno detaches the transferred buffers even when the clone fails.
    for (let i = 0; i < transfer.length; i++) {
      const item = transfer[i];
      if (isArrayBuffer(item) && !ArrayBufferPrototypeGetDetached(item)) ArrayBufferPrototypeTransfer(item);
    }
  }
}

function cloneValue<T>(value: T, memory: Map<object, unknown>): T {

  function clone(input: unknown): unknown {
    if (typeof input === 'symbol') throw notCloneable(SymbolPrototypeToString(input));
    if (typeof input === 'function') throw notCloneable(FunctionPrototypeToString(input));
    if (typeof input !== 'object' || input === null) return input;
    const seen = MapPrototypeGet(memory, input);
    if (seen !== undefined) return seen;

    const tag = ObjectPrototypeToString(input);
    let output: object;
    switch (tag) {
      case '[object Boolean]': output = Object(BooleanPrototypeValueOf(input)) as object; break;
      case '[object Number]': output = Object(NumberPrototypeValueOf(input)) as object; break;
      case '[object String]': output = Object(StringPrototypeValueOf(input)) as object; break;
      case '[object BigInt]': output = Object(BigInt(BigIntPrototypeToString(input))) as object; break;
      case '[object Date]': output = new Date(DatePrototypeGetTime(input)); break;
      case '[object RegExp]': output = new RegExp(RegExpPrototypeGetSource(input as RegExp), RegExpPrototypeGetFlags(input as RegExp)); break;
      case '[object ArrayBuffer]': output = copyArrayBuffer(input as ArrayBuffer); break;
      default: output = cloneComposite(input, tag); return output;
    }
    MapPrototypeSet(memory, input, output);
    return output;
  }

  function cloneComposite(input: object, tag: string): object {
    if (ArrayBufferIsView(input)) {
      const typedTag = TypedArrayPrototypeGetSymbolToStringTag(input);
      if (typedTag === undefined) {
        const buffer = clone(DataViewPrototypeGetBuffer(input as DataView)) as ArrayBuffer;
        const output = new DataView(buffer, DataViewPrototypeGetByteOffset(input as DataView), DataViewPrototypeGetByteLength(input as DataView));
        MapPrototypeSet(memory, input, output);
        return output;
      }
      const Ctor = TYPED_ARRAYS[typedTag];
      if (Ctor === undefined) throw notCloneable(`#<${typedTag}>`);
      const buffer = clone(TypedArrayPrototypeGetBuffer(input)) as ArrayBuffer;
      const output = new Ctor(buffer, TypedArrayPrototypeGetByteOffset(input), TypedArrayPrototypeGetLength(input));
      MapPrototypeSet(memory, input, output);
      return output;
    }
    if (tag === '[object Map]' && input instanceof Map) {
      const output = new Map<unknown, unknown>();
      MapPrototypeSet(memory, input, output);
      const entries: unknown[] = [];
      let count = 0;
      MapPrototypeForEach(input as Map<unknown, unknown>, (entryValue, key) => { entries[count++] = key; entries[count++] = entryValue; });
      for (let i = 0; i < count; i += 2) MapPrototypeSet(output, clone(entries[i]), clone(entries[i + 1]));
      return output;
    }
    if (tag === '[object Set]' && input instanceof Set) {
      const output = new Set<unknown>();
      MapPrototypeSet(memory, input, output);
      const items: unknown[] = [];
      let count = 0;
      SetPrototypeForEach(input as Set<unknown>, (item) => { items[count++] = item; });
      for (let i = 0; i < count; i++) SetPrototypeAdd(output, clone(items[i]));
      return output;
    }
    if (tag === '[object Error]') {
      const source = input as Error;
      const name = source.name;
      const Ctor = (typeof name === 'string' && ObjectHasOwn(ERROR_CONSTRUCTORS, name) ? ERROR_CONSTRUCTORS[name] : undefined) ?? Error;
      const output = new Ctor();
      MapPrototypeSet(memory, input, output);
      const message: unknown = source.message;
      if (message !== undefined) ObjectDefineProperty(output, 'message', { value: toDOMString(message), writable: true, configurable: true });
      const stack = source.stack;
      ObjectDefineProperty(output, 'stack', { value: typeof stack === 'string' ? stack : undefined, writable: true, configurable: true });
      if (ObjectHasOwn(source, 'cause')) ObjectDefineProperty(output, 'cause', { value: clone(source.cause), writable: true, configurable: true });
      return output;
    }
    if (ArrayIsArray(input)) {
      const output: unknown[] = new Array<unknown>((input as unknown[]).length);
      MapPrototypeSet(memory, input, output);
      const keys = ObjectKeys(input);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        define(output, key, clone((input as unknown as Record<string, unknown>)[key]));
      }
      return output;
    }
    if (tag !== '[object Object]' && tag !== '[object Arguments]') {
      // Promises, WeakMaps, host-like objects, class instances with a custom tag ...
      throw notCloneable(`#<${StringPrototypeSlice(tag, 8, -1)}>`);
    }
    const output: Record<string, unknown> = {};
    MapPrototypeSet(memory, input, output);
    const keys = ObjectKeys(input);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      define(output, key, clone((input as Record<string, unknown>)[key]));
    }
    return output;
  }

  return clone(value) as T;
}
