/**
 * Every error `guardedFetch` lets reach the guest is built here, with a vetted message. Raw
 * undici and Node errors carry resolved addresses, local ports and internals, so they are read
 * only for their `code` and replaced by the text Deno prints for the same failure
 * (`error sending request for url (...): client error (Connect): ...`).
 */
import { constants } from 'node:os';
import { GuestError } from '../../errors.ts';
import { redactedHref } from './target.ts';

/** Deno's denial, byte for byte (Deno names the address when a hostname resolved to it). */
export function netNotCapable(target: string): GuestError {
  return new GuestError('NotCapable', `Requires net access to "${target}", run again with the --allow-net flag`);
}

export function abortError(): GuestError {
  return new GuestError('AbortError', 'The signal has been aborted');
}

export function timeoutError(url: URL, timeoutMs: number): GuestError {
  return sendError(url, `operation timed out (the fetch time limit is ${timeoutMs} ms)`);
}

export function responseTooLarge(url: URL, maxBytes: number): GuestError {
  return new GuestError(
    'TypeError',
    `error reading a body from connection: the response body of ${redactedHref(url)} exceeded the fetch body limit of ${maxBytes} bytes; the connection was closed`,
  );
}

export function requestTooLarge(bytes: number, maxBytes: number): GuestError {
  return new GuestError(
    'TypeError',
    `The request (headers and body) is ${bytes} bytes, more than the fetch request limit of ${maxBytes} bytes`,
  );
}

/** Deno: `TypeError: fetch failed`, with the detail in an Error `cause`. */
function sendError(url: URL, detail: string): GuestError {
  return new GuestError('TypeError', 'fetch failed', { name: 'Error', message: `error sending request for url (${redactedHref(url)}): ${detail}` });
}

// strerror(3) texts, as Rust prints them in "(os error N)" messages.
const SOCKET_ERRORS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'Connection refused',
  ECONNRESET: 'Connection reset by peer',
  ECONNABORTED: 'Software caused connection abort',
  EHOSTUNREACH: 'No route to host',
  ENETUNREACH: 'Network is unreachable',
  ENETDOWN: 'Network is down',
  EHOSTDOWN: 'Host is down',
  ETIMEDOUT: 'Connection timed out',
  EADDRNOTAVAIL: 'Cannot assign requested address',
  EPIPE: 'Broken pipe',
};

// getaddrinfo failures, as gai_strerror(3) words them.
const DNS_ERRORS: Readonly<Record<string, string>> = {
  ENOTFOUND: 'Name or service not known',
  EAI_NONAME: 'Name or service not known',
  EAI_AGAIN: 'Temporary failure in name resolution',
  ENODATA: 'No address associated with hostname',
  EAI_NODATA: 'No address associated with hostname',
  EAI_FAIL: 'Non-recoverable failure in name resolution',
};

// Node's certificate verification codes -> rustls's words for them.
const CERTIFICATE_ERRORS: Readonly<Record<string, string>> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'UnknownIssuer',
  SELF_SIGNED_CERT_IN_CHAIN: 'UnknownIssuer',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'UnknownIssuer',
  UNABLE_TO_GET_ISSUER_CERT: 'UnknownIssuer',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'UnknownIssuer',
  CERT_HAS_EXPIRED: 'Expired',
  CERT_NOT_YET_VALID: 'NotValidYet',
  CERT_REVOKED: 'Revoked',
  CERT_SIGNATURE_FAILURE: 'BadSignature',
  INVALID_CA: 'UnknownIssuer',
};

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code !== '') return code;
  // With several addresses Node raises an AggregateError; the last attempt says what happened.
  if (error instanceof AggregateError) return errorCode(error.errors.at(-1));
  return errorCode((error as { cause?: unknown }).cause);
}

function osError(code: string): string {
  const errno = (constants.errno as Readonly<Record<string, number | undefined>>)[code];
  const text = SOCKET_ERRORS[code] ?? code;
  return errno === undefined ? text : `${text} (os error ${errno})`;
}

/** A failed DNS lookup of the URL's host. */
export function dnsError(url: URL, error: unknown): GuestError {
  const reason = DNS_ERRORS[errorCode(error) ?? ''] ?? 'failed to lookup address information';
  return sendError(url, `client error (Connect): dns error: failed to lookup address information: ${reason}`);
}

/** Any other failure of one hop, mapped by its code only. `phase` says whether headers had arrived. */
export function transportError(url: URL, error: unknown, phase: 'send' | 'body'): GuestError {
  const code = errorCode(error) ?? '';
  if (phase === 'body') return new GuestError('TypeError', 'error reading a body from connection'); // Deno's words
  if (code in SOCKET_ERRORS && code !== 'ECONNRESET' && code !== 'EPIPE') {
    return sendError(url, `client error (Connect): tcp connect error: ${osError(code)}`);
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return sendError(url, `client error (Connect): tcp connect error: ${osError('ETIMEDOUT')}`);
  }
  const certificate = CERTIFICATE_ERRORS[code];
  if (certificate !== undefined) return sendError(url, `client error (Connect): invalid peer certificate: ${certificate}`);
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return sendError(url, `client error (Connect): invalid peer certificate: certificate not valid for name "${url.hostname}"`);
  }
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code === 'EPROTO') {
    return sendError(url, 'client error (Connect): TLS handshake failed');
  }
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return sendError(url, 'client error (SendRequest): message head is too large');
  if (code.startsWith('HPE_')) return sendError(url, 'client error (SendRequest): invalid HTTP response');
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return sendError(url, 'client error (SendRequest): operation timed out');
  return sendError(url, 'client error (SendRequest): connection closed before message completed');
}
