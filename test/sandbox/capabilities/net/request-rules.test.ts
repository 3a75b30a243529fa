/**
 * Pins the pure request rules: which guest headers are sent, and what the next hop of a redirect
 * looks like (Fetch standard method rewriting, fragment carry-over, credential stripping).
 */
import { describe, expect, it } from 'vitest';
import { GuestError } from '../../../../sandbox/errors.ts';
import { nextHop } from '../../../../sandbox/capabilities/net/redirect.ts';
import type { HopRequest } from '../../../../sandbox/capabilities/net/redirect.ts';
import { prepareRequestHeaders } from '../../../../sandbox/capabilities/net/request-headers.ts';

describe('request headers', () => {
  it('lowercases names, trims values, and adds only the defaults the guest did not set', () => {
    const prepared = prepareRequestHeaders(
      [['Accept', ' application/json\t'], ['X-Multi', 'a'], ['x-multi', 'b'], ['Accept-Encoding', 'identity']],
      { userAgent: 'Paddock' },
    );
    expect(prepared).toEqual([
      ['accept', 'application/json'],
      ['x-multi', 'a'],
      ['x-multi', 'b'],
      ['accept-encoding', 'identity'],
      ['accept-language', '*'],
      ['user-agent', 'Paddock'],
    ]);
  });

  it('rejects a value that is not a byte string', () => {
    expect(() => prepareRequestHeaders([['x-emoji', '☃']], { userAgent: 'Paddock' })).toThrow(GuestError);
  });
});

describe('next hop of a redirect', () => {
  const request = (init: Partial<HopRequest> = {}): HopRequest => ({
    url: new URL('https://a.example/start#section'),
    method: 'GET',
    headers: [['authorization', 'Bearer t'], ['content-type', 'text/plain'], ['x-keep', '1']],
    body: null,
    ...init,
  });
  const policy = { mode: 'follow', followed: 0, maxRedirects: 20 } as const;

  it('carries the fragment over when the Location has none', () => {
    expect(nextHop(request(), { status: 302, location: '/next' }, policy)?.url.href).toBe('https://a.example/next#section');
    expect(nextHop(request(), { status: 302, location: '/next#other' }, policy)?.url.href).toBe('https://a.example/next#other');
  });

  it('keeps HEAD on a 303, and strips credentials when the scheme alone changes the origin', () => {
    const hop = nextHop(request({ method: 'HEAD' }), { status: 303, location: 'http://a.example/plain' }, policy);
    expect(hop?.method).toBe('HEAD');
    expect(hop?.headers).toEqual([['content-type', 'text/plain'], ['x-keep', '1']]);
  });

  it('treats other 3xx codes as final responses', () => {
    for (const status of [300, 304, 305, 306]) expect(nextHop(request(), { status, location: '/x' }, policy)).toBeUndefined();
  });
});
