/**
 * Pins: `--allow-net` entries parse, normalise and fail exactly as Deno 2.9 does. Every expected
 * message and display form below was printed by real Deno (`deno run --allow-net=<entry>`, or a
 * denied fetch for the display of a connection target).
 */
import { describe, expect, it } from 'vitest';
import { GuestError } from '../../../sandbox/errors.ts';
import { checkNet, netTarget } from '../../../sandbox/grants/check.ts';
import { formatIp, parseIp, parseIpv6 } from '../../../sandbox/grants/ip-address.ts';
import { formatNetDescriptor, NetSyntaxError, parseNetEntry } from '../../../sandbox/grants/net-descriptor.ts';
import { NO_GRANT } from '../../../sandbox/grants/grant.ts';

const display = (entry: string) => parseNetEntry(entry).map(formatNetDescriptor);

describe('parseNetEntry: entries Deno accepts', () => {
  it.each([
    ['EXAMPLE.COM', ['example.com']],
    ['A.COM:443', ['a.com:443']],
    ['example.com.', ['example.com']],
    ['*.example.com', ['*.example.com']],
    ['*.EXAMPLE.com:8443', ['*.example.com:8443']],
    ['[::1]', ['[::1]']],
    ['[::1]:8080', ['[::1]:8080']],
    ['[0:0:0:0:0:0:0:1]', ['[::1]']],
    ['[2001:DB8:0:0:1:0:0:1]:80', ['[2001:db8::1:0:0:1]:80']],
    ['[::ffff:1.2.3.4]', ['1.2.3.4']],
    ['[::ffff:102:304]:443', ['1.2.3.4:443']],
    ['[fe80::1%eth0]', ['[fe80::1]']],
    ['1.2.3.4:80', ['1.2.3.4:80']],
    ['10.0.0.0/8', ['10.0.0.0/8']],
    ['10.0.0.0/08:443', ['10.0.0.0/8:443']],
    ['example.com:+80', ['example.com:80']],
    ['example.com:08', ['example.com:8']],
    ['example.com:0', ['example.com:0']],
    ['example.com:65535', ['example.com:65535']],
    // Not addresses to Deno (Rust's strict IPv4 parser), so they are host names.
    ['1.2.3', ['1.2.3']],
    ['0x7f.0.0.1', ['0x7f.0.0.1']],
    ['01.2.3.4:80', ['01.2.3.4:80']],
    ['256.1.1.1', ['256.1.1.1']],
    ['*.1.2.3.4', ['*.1.2.3.4']],
    ['exa_mple.com', ['exa_mple.com']],
    ['-a.com', ['-a.com']],
    ['a#b.com', ['a#b.com']],
    ['xn--nxasmq6b.com', ['xn--nxasmq6b.com']],
    [':8000', ['0.0.0.0:8000', '127.0.0.1:8000', 'localhost:8000']],
  ])('%s -> %j', (entry, expected) => {
    expect(display(entry)).toEqual(expected);
  });

  it('accepts a 255-character label and refuses 256', () => {
    expect(display(`${'b'.repeat(255)}.com`)).toEqual([`${'b'.repeat(255)}.com`]);
    expect(() => parseNetEntry(`${'a'.repeat(256)}.com`))
      .toThrow(`invalid host '${'a'.repeat(256)}.com': too long label found in FQDN`);
  });
});

describe('parseNetEntry: entries Deno refuses, with its message', () => {
  it.each([
    ['bad host', "invalid host 'bad host': invalid char found in FQDN"],
    ['http://x.com', "invalid value 'http://x.com': URLs are not supported, only domains and IPs"],
    ['ftp://x.com', "invalid value 'ftp://x.com': URLs are not supported, only domains and IPs"],
    ['example.com:99999', "invalid port in 'example.com:99999': '99999'"],
    ['example.com:65536', "invalid port in 'example.com:65536': '65536'"],
    ['a.com:-1', "invalid port in 'a.com:-1': '-1'"],
    ['example.com:', "invalid empty port in 'example.com:'"],
    ['::1', "invalid empty host: ''"],
    ['::1:80', "invalid empty host: ''"],
    ['', "invalid empty host: ''"],
    ['.', "invalid empty host: '.'"],
    ['*.', "invalid empty host: '*.'"],
    ['[::1', "invalid host: '[::1'"],
    ['[::1]x', "invalid host: '[::1]x'"],
    ['[::1].', "invalid host: '[::1].'"],
    ['[::1]:', "invalid port in '[::1]:': ''"],
    ['[zz]', "invalid IPv6 address in '[zz]': 'zz'"],
    ['[1.2.3.4]', "invalid IPv6 address in '[1.2.3.4]': '1.2.3.4'"],
    ['1.2.3.4.', "invalid host: '1.2.3.4'"],
    ['a..b', "invalid host 'a..b': empty label found in FQDN"],
    ['.a.com', "invalid host '.a.com': empty label found in FQDN"],
    ['a.com..', "invalid host 'a.com..': empty label found in FQDN"],
    ['..', "invalid host '..': empty label found in FQDN"],
    ['ünicode.com', "invalid host 'ünicode.com': invalid char found in FQDN"],
    ['a.com/path', "invalid host 'a.com/path': invalid char found in FQDN"],
    ['*', "invalid host '*': invalid char found in FQDN"],
    ['*.*.a.com', "invalid host '*.*.a.com': invalid char found in FQDN"],
    ['a.*.com', "invalid host 'a.*.com': invalid char found in FQDN"],
    ['10/8', "invalid host '10/8': invalid char found in FQDN"],
    ['10.0.0.0/33', "invalid host '10.0.0.0/33': invalid char found in FQDN"],
    ['a.com:80:90', "ipv6 addresses must be enclosed in square brackets: 'a.com:80:90'"],
    // Folding only ASCII letters: the Kelvin sign must not become a "k".
    ['\u212Aexample.com', "invalid host '\u212Aexample.com': invalid char found in FQDN"],
  ])('%j', (entry, message) => {
    expect(() => parseNetEntry(entry)).toThrow(new NetSyntaxError(message));
  });

  it('refuses vsock addresses, which Paddock cannot reach', () => {
    expect(() => parseNetEntry('vsock:1:2')).toThrow("invalid value 'vsock:1:2': vsock addresses are not supported");
  });
});

describe('connection targets (a URL host and its port)', () => {
  it.each([
    ['example.com', 443, 'example.com:443'],
    ['Ex-Ample.COM', 443, 'ex-ample.com:443'],
    ['example.com.', 8080, 'example.com:8080'],
    ['[::1]', 8080, '[::1]:8080'],
    ['::1', 80, '[::1]:80'],
    ['[::1.2.3.4]', 80, '[::102:304]:80'],
    ['[::ffff:1.2.3.4]', 80, '1.2.3.4:80'],
    ['::ffff:1.2.3.4', 80, '1.2.3.4:80'],
    ['[2001:db8:0:0:1:0:0:1]', 80, '[2001:db8::1:0:0:1]:80'],
    ['127.0.0.1', 80, '127.0.0.1:80'],
    ['a_b.com', 80, 'a_b.com:80'],
  ])('%s:%i is named %s', (hostname, port, expected) => {
    expect(netTarget(hostname, port)).toBe(expected);
  });

  it('throws Deno\'s URIError for a host it cannot parse, when the grant is a list', () => {
    expect(() => checkNet(NO_GRANT, 'a$b.com', 80)).toThrow(new GuestError('URIError', "invalid host 'a$b.com': invalid char found in FQDN"));
    expect(checkNet({ ...NO_GRANT, net: true }, 'a$b.com', 80)).toBe('a$b.com:80');
  });
});

describe('IP addresses', () => {
  it('formats IPv6 as RFC 5952 (first longest zero run, two groups or more)', () => {
    const format = (text: string) => formatIp(parseIpv6(text) ?? { version: 4, octets: [] });
    expect(format('1:0:0:2:0:0:0:3')).toBe('1:0:0:2::3');
    expect(format('1:0:0:2:0:0:3:4')).toBe('1::2:0:0:3:4');
    expect(format('1:2:3:4:5:6:0:8')).toBe('1:2:3:4:5:6:0:8');
    expect(format('::')).toBe('::');
    expect(format('fe80::')).toBe('fe80::');
  });

  it('parses strictly, as Rust does', () => {
    expect(parseIp('1.2.3.4')).toBeDefined();
    expect(parseIp('01.2.3.4')).toBeUndefined();
    expect(parseIp('1.2.3')).toBeUndefined();
    expect(parseIp('1:2:3:4:5:6:7:8::')).toBeUndefined();
    expect(parseIp('1::2::3')).toBeUndefined();
    expect(parseIp('1.2.3.4::')).toBeUndefined();
    expect(parseIp('::ffff:1.2.3.4')).toEqual({ version: 4, octets: [1, 2, 3, 4] });
  });
});
