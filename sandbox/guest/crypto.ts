/** crypto.getRandomValues and crypto.randomUUID over the sync `randomBytes` op (no SubtleCrypto). */
import { MAX_RANDOM_BYTES } from '../protocol.ts';
import { hostCall } from './bridge.ts';
import { DOMException } from './errors.ts';
import {
  ArrayBufferIsView, NumberPrototypeToString, ObjectDefineProperty, StringPrototypePadStart, SymbolToStringTag,
  TypedArrayPrototypeGetBuffer, TypedArrayPrototypeGetByteLength, TypedArrayPrototypeGetByteOffset,
  TypedArrayPrototypeGetSymbolToStringTag, TypedArrayPrototypeSet, TypeErrorCtor, Uint8ArrayCtor,
} from './primordials.ts';

const INTEGER_ARRAYS = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'BigInt64Array', 'BigUint64Array'];

function randomBytes(length: number): Uint8Array {
  const bytes = hostCall('randomBytes', { length });
  if (!(bytes instanceof Uint8ArrayCtor) || TypedArrayPrototypeGetByteLength(bytes) !== length) {
    throw new TypeErrorCtor('The host returned malformed random bytes.');
  }
  return bytes;
}

let constructing = false;

export class Crypto {
  constructor() {
    if (!constructing) throw new TypeErrorCtor('Illegal constructor.');
  }

  get subtle(): undefined { return undefined; }

  getRandomValues<T extends ArrayBufferView | null>(array: T): T {
    if (arguments.length === 0) throw new TypeErrorCtor("Failed to execute 'getRandomValues' on 'Crypto': 1 argument required, but only 0 present.");
    const tag = ArrayBufferIsView(array) ? TypedArrayPrototypeGetSymbolToStringTag(array) : undefined;
    let integer = false;
    for (let i = 0; i < INTEGER_ARRAYS.length; i++) if (INTEGER_ARRAYS[i] === tag) integer = true;
    if (!integer) throw new DOMException('The provided value is not an integer-type TypedArray', 'TypeMismatchError');
    const view = array as unknown as ArrayBufferView;
    const byteLength = TypedArrayPrototypeGetByteLength(view);
    if (byteLength > MAX_RANDOM_BYTES) {
      throw new DOMException(
        `The ArrayBufferView's byte length (${byteLength}) exceeds the number of bytes of entropy available via this API (${MAX_RANDOM_BYTES})`,
        'QuotaExceededError',
      );
    }
    if (byteLength === 0) return array;
    const target = new Uint8ArrayCtor(TypedArrayPrototypeGetBuffer(view) as ArrayBuffer, TypedArrayPrototypeGetByteOffset(view), byteLength);
    TypedArrayPrototypeSet(target, randomBytes(byteLength), 0);
    return array;
  }

  randomUUID(): string {
    const bytes = randomBytes(16);
    bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40; // version 4
    bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80; // RFC 4122 variant
    let hex = '';
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) hex += '-';
      hex += StringPrototypePadStart(NumberPrototypeToString(bytes[i], 16), 2, '0');
    }
    return hex;
  }
}
ObjectDefineProperty(Crypto.prototype, SymbolToStringTag, { value: 'Crypto', configurable: true });

export function createCrypto(): Crypto {
  constructing = true;
  try {
    return new Crypto();
  } finally {
    constructing = false;
  }
}
