/**
 * Pins: URL and URLSearchParams follow the WHATWG URL standard as Deno 2 does: the same href
 * (or the same TypeError message) for a battery of edge cases, and the same setter behaviour.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { denoEvaluate } from './helpers/deno.ts';
import { createGuest, evaluate, type Guest } from './helpers/fake-host.ts';

let guest: Guest;
beforeAll(async () => { guest = await createGuest(); });
afterAll(() => { guest.dispose(); });

const PARSE_CASES: [string, string?][] = [
  ['https://example.com'], ['HTTPS://EXAMPLE.COM:443/a/../b/./c?q=1#f'], ['http://example.com:80/'], ['http://example.com:8080'],
  ['https://user:pa ss@host.com/p'], ['https://@host.com/'], ['https://a@b@host.com/'], ['http://host.com:65536/'],
  ['http://host.com:99999999999999999/'], ['http://[::1]:3000/x'], ['http://[::ffff:192.168.0.1]/'], ['http://[1:0:0:2::3:0]/'],
  ['http://[::1'], ['http://[g::1]/'], ['http://0x7f.1/'], ['http://127.1/'], ['http://2130706433/'], ['http://0177.0.0.1/'],
  ['http://256.256.256.256/'], ['http://1.2.3.4.5/'], ['http://1.2.3.09/'], ['http://example.com./'], ['http://exa mple.com/'],
  ['http://exa%41mple.com/'], ['http://münchen.de/'], ['http://ÉXAMPLE.com/'], ['http://例え.テスト/'], ['http://xn--mnchen-3ya.de/'],
  ['http://a.b\\c/d'], ['http:\\\\host\\path'], ['http:host/path'], ['http:/host/path'], ['http:///host/path'],
  ['file:///C:/x/../y'], ['file://localhost/etc/passwd'], ['file:etc/passwd'], ['file://host/share'], ['file:///a/b/../../..'],
  ['mailto:someone@example.com'], ['data:text/plain,hello world'], ['javascript:alert(1)'], ['urn:isbn:0451450523'],
  ['non-special://host/p?q#f'], ['non-special://[1::2]/'], ['non-special:/p/../q'], ['non-special:opaque path  '],
  ['https://host/ä?ä#ä'], ['https://host/%zz?%zz'], ["https://host/a'b?c'd"], ['ws://host/?a=`b`'], ['https://host/<x>{y}|z^'],
  ['  https://host/\t\n  '], ['https://ho\tst/'], [''], ['nope'], ['//host/p'], ['/relative', 'https://base.com/a/b'],
  ['../x', 'https://base.com/a/b/c'], ['?q', 'https://base.com/a?old#h'], ['#h', 'https://base.com/a?q'], ['//other/p', 'https://base.com/'],
  ['x', 'mailto:a@b'], ['#f', 'mailto:a@b'], ['https:rel', 'https://base.com/dir/'], ['C|/x', 'file:///a/b'], ['x', 'nope'],
  ['http://host:/p'], ['https://host:443abc/'], ['http://%41.com/'], ['http://a%2Fb.com/'], ['http://[::1]x/'], ['sc://ñ.com/'],
];

describe('URL parsing, compared with Deno 2', () => {
  it('gives the same href or the same error for every case', async () => {
    const program = `
      const out = [];
      for (const [input, base] of ${JSON.stringify(PARSE_CASES)}) {
        try {
          const u = base === undefined ? new URL(input) : new URL(input, base);
          out.push([u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash]);
        } catch (e) {
          out.push({ error: e.constructor.name, message: e.message });
        }
      }
      return out;`;
    const [ours, deno] = await Promise.all([evaluate(guest, program), denoEvaluate(program)]);
    const label = (results: unknown): unknown[] => PARSE_CASES.map((input, i) => ({ input, result: (results as unknown[])[i] }));
    expect(label(ours)).toEqual(label(deno));
  });

  it('applies setters and searchParams the same way', async () => {
    const program = `
      const u = new URL('https://user:pw@example.com:8080/a/b?x=1&y=2#frag');
      const log = [];
      const snap = () => log.push(u.href);
      u.protocol = 'http'; snap();
      u.protocol = 'mailto'; snap();
      u.username = 'n@me'; snap();
      u.password = ''; snap();
      u.host = 'other.org:81'; snap();
      u.hostname = 'third.net'; snap();
      u.port = '80'; snap();
      u.port = '99999'; snap();
      u.port = '123abc'; snap();
      u.pathname = '/p q/../r'; snap();
      u.search = '?a b=c d'; snap();
      u.hash = 'new hash'; snap();
      u.searchParams.append('k', 'v w&x'); snap();
      u.searchParams.set('a b', '1'); snap();
      u.searchParams.delete('k'); snap();
      u.searchParams.sort(); snap();
      u.search = ''; snap();
      u.hash = ''; snap();
      u.href = 'https://fresh.example/'; snap();
      try { u.href = 'nope'; } catch (e) { log.push(e.message); }
      const o = new URL('mailto:x  ?q'); o.search = ''; log.push(JSON.stringify(o.pathname));
      return log;`;
    const [ours, deno] = await Promise.all([evaluate(guest, program), denoEvaluate(program)]);
    expect(ours).toEqual(deno);
  });

  it('handles URLSearchParams construction, encoding and iteration the same way', async () => {
    const program = `
      const out = [];
      const p = new URLSearchParams('?a=1&b=2+3&a=%zz&c&=d&e=%F0%9F%98%80&&');
      out.push(p.toString(), [...p], p.getAll('a'), p.get('c'), p.get('missing'), p.has('a', '1'), p.has('a', '2'), p.size);
      out.push(new URLSearchParams({ x: 'y z', 'é': '~!*()\\'' }).toString());
      out.push(new URLSearchParams([['a', '1'], ['a', '2']]).toString());
      try { new URLSearchParams([['a']]); } catch (e) { out.push(e.constructor.name); }
      const q = new URLSearchParams('z=1&a=2&z=0&b=3'); q.sort(); out.push(q.toString(), [...q.keys()], [...q.values()]);
      q.delete('z', '1'); out.push(q.toString());
      const seen = []; q.forEach((v, k) => seen.push(k + '=' + v)); out.push(seen);
      out.push(Object.prototype.toString.call(q.entries()), URL.canParse('x', 'https://a/'), URL.parse('nope'), String(new URL('https://a/b')));
      out.push(JSON.stringify({ u: new URL('https://a/b') }));
      return out;`;
    const [ours, deno] = await Promise.all([evaluate(guest, program), denoEvaluate(program)]);
    expect(ours).toEqual(deno);
  });
});
