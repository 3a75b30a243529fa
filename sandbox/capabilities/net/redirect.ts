/**
 * Redirect rules of the Fetch standard ("HTTP-redirect fetch"), as a pure decision on one hop's
 * response. The caller re-checks the grant and the address of the next hop: a redirect is a new
 * request to a URL the server chose, so it gets no trust from the first one.
 */
import { GuestError } from '../../errors.ts';
import type { FetchArgs, HttpHeaders } from '../../protocol.ts';
import { redirectHeaders } from './request-headers.ts';
import { isHttpUrl, parseFetchUrl, sameOrigin } from './target.ts';

export interface HopRequest {
  readonly url: URL;
  readonly method: string;
  readonly headers: HttpHeaders;
  readonly body: Uint8Array | null;
}

export type RedirectMode = FetchArgs['redirect'];

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export function isRedirectStatus(status: number): boolean {
  return REDIRECT_STATUSES.has(status);
}

/**
 * The request for the next hop, or `undefined` when this response is the final one (not a
 * redirect, `manual` mode, or no Location). Throws Deno's TypeError for `error` mode, a bad or
 * non-http(s) Location, and one redirect past `maxRedirects`.
 */
export function nextHop(
  request: HopRequest,
  response: { readonly status: number; readonly location: string | undefined },
  policy: { readonly mode: RedirectMode; readonly followed: number; readonly maxRedirects: number },
): HopRequest | undefined {
  if (!isRedirectStatus(response.status) || policy.mode === 'manual') return undefined;
  if (policy.mode === 'error') {
    throw new GuestError('TypeError', "Fetch failed: Encountered redirect while redirect mode is set to 'error'");
  }
  if (response.location === undefined) return undefined;
  const url = parseFetchUrl(response.location, request.url);
  if (url.hash === '' && request.url.hash !== '') url.hash = request.url.hash; // Fetch: the fragment carries over
  if (!isHttpUrl(url)) throw new GuestError('TypeError', 'Fetch failed: Can not redirect to a non HTTP(s) url');
  if (policy.followed >= policy.maxRedirects) {
    throw new GuestError('TypeError', `Fetch failed: Maximum number of redirects (${policy.maxRedirects}) reached`);
  }
  const becomesGet =
    ((response.status === 301 || response.status === 302) && request.method === 'POST') ||
    (response.status === 303 && request.method !== 'GET' && request.method !== 'HEAD');
  return {
    url,
    method: becomesGet ? 'GET' : request.method,
    headers: redirectHeaders(request.headers, { crossOrigin: !sameOrigin(request.url, url), dropBody: becomesGet }),
    body: becomesGet ? null : request.body,
  };
}
