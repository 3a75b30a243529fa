/**
 * Error classes the guest exposes (DOMException, Deno.errors.*) and the rebuilding of a host
 * BridgeError into one of them. Only a vetted name and the message cross; the stack is the guest's.
 */
import type { BridgeError } from '../protocol.ts';
import {
  ErrorCtor, ObjectDefineProperty, ObjectFreeze, ObjectHasOwn, RangeErrorCtor, TypeErrorCtor, toDOMString,
} from './primordials.ts';

// Legacy DOMException codes, as the Web platform defines them (0 for names without one).
const DOM_EXCEPTION_CODES: Readonly<Record<string, number>> = ObjectFreeze({
  __proto__: null,
  IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
  NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
  SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
  TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
  QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
} as unknown as Record<string, number>);

export class DOMException extends ErrorCtor {
  readonly #name: string;
  readonly #code: number;

  constructor(message = '', name = 'Error') {
    super(toDOMString(message));
    this.#name = toDOMString(name);
    this.#code = ObjectHasOwn(DOM_EXCEPTION_CODES, this.#name) ? (DOM_EXCEPTION_CODES[this.#name] ?? 0) : 0;
  }

  // Tolerant of a read during super() (before the fields exist), when V8 may format the stack.
  override get name(): string { return #name in this ? this.#name : 'Error'; }
  get code(): number { return #code in this ? this.#code : 0; }
}
// The legacy code constants (INDEX_SIZE_ERR = 1 ... DATA_CLONE_ERR = 25) on the class and its prototype.
const LEGACY_CODE_NAMES = ['INDEX_SIZE_ERR', 'DOMSTRING_SIZE_ERR', 'HIERARCHY_REQUEST_ERR', 'WRONG_DOCUMENT_ERR',
  'INVALID_CHARACTER_ERR', 'NO_DATA_ALLOWED_ERR', 'NO_MODIFICATION_ALLOWED_ERR', 'NOT_FOUND_ERR',
  'NOT_SUPPORTED_ERR', 'INUSE_ATTRIBUTE_ERR', 'INVALID_STATE_ERR', 'SYNTAX_ERR', 'INVALID_MODIFICATION_ERR',
  'NAMESPACE_ERR', 'INVALID_ACCESS_ERR', 'VALIDATION_ERR', 'TYPE_MISMATCH_ERR', 'SECURITY_ERR', 'NETWORK_ERR',
  'ABORT_ERR', 'URL_MISMATCH_ERR', 'QUOTA_EXCEEDED_ERR', 'TIMEOUT_ERR', 'INVALID_NODE_TYPE_ERR', 'DATA_CLONE_ERR'];
for (let i = 0; i < LEGACY_CODE_NAMES.length; i++) {
  const name = LEGACY_CODE_NAMES[i] as string;
  const descriptor = { value: i + 1, enumerable: true };
  ObjectDefineProperty(DOMException, name, descriptor);
  ObjectDefineProperty(DOMException.prototype, name, descriptor);
}
ObjectDefineProperty(DOMException.prototype, Symbol.toStringTag, { value: 'DOMException', configurable: true });

/** Deno's error classes: each is a plain Error subclass whose `name` is its class name. */
function denoError(name: string): typeof Error {
  const ErrorClass = class extends ErrorCtor {
    constructor(message?: string, options?: ErrorOptions) {
      super(message, options);
      ObjectDefineProperty(this, 'name', { value: name, writable: true, enumerable: false, configurable: true });
    }
  };
  ObjectDefineProperty(ErrorClass, 'name', { value: name });
  return ErrorClass as typeof Error;
}

const DENO_ERROR_NAMES = [
  'NotFound', 'PermissionDenied', 'ConnectionRefused', 'ConnectionReset', 'ConnectionAborted', 'NotConnected',
  'AddrInUse', 'AddrNotAvailable', 'BrokenPipe', 'AlreadyExists', 'InvalidData', 'TimedOut', 'Interrupted',
  'WriteZero', 'WouldBlock', 'UnexpectedEof', 'BadResource', 'Http', 'Busy', 'NotSupported', 'FilesystemLoop',
  'IsADirectory', 'NetworkUnreachable', 'NotADirectory', 'NotCapable',
] as const;
export type DenoErrorName = (typeof DENO_ERROR_NAMES)[number];

export const denoErrors: Readonly<Record<DenoErrorName, typeof Error>> = (() => {
  const errors = { __proto__: null } as unknown as Record<DenoErrorName, typeof Error>;
  for (let i = 0; i < DENO_ERROR_NAMES.length; i++) {
    const name = DENO_ERROR_NAMES[i] as DenoErrorName;
    errors[name] = denoError(name);
  }
  return ObjectFreeze(errors);
})();

/** Rebuilds a host error inside the guest; unknown names become a plain Error with the same message. */
export function rebuildError(error: BridgeError): Error {
  const name = typeof error.name === 'string' ? error.name : 'Error';
  const message = typeof error.message === 'string' ? error.message : 'host operation failed';
  if (ObjectHasOwn(denoErrors, name)) return new (denoErrors[name as DenoErrorName])(message);
  switch (name) {
    case 'TypeError': return new TypeErrorCtor(message);
    case 'RangeError': return new RangeErrorCtor(message);
    case 'AbortError': case 'TimeoutError': case 'QuotaExceededError': case 'DataCloneError': case 'NetworkError':
      return new DOMException(message, name);
    default: return new ErrorCtor(message);
  }
}

export function abortError(message = 'The signal has been aborted'): DOMException {
  return new DOMException(message, 'AbortError');
}
