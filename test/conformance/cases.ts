/**
 * The conformance corpus: each case runs one module of test/fixtures/conformance/modules under
 * `deno run` and under `paddock run` with the same params, flags and environment. Placeholders:
 * `{dir}` is the run's workspace (see harness.ts), `{port}` the granted loopback server, `{port2}`
 * a server that is never granted. A case with `expectedDifference` pins both outputs exactly.
 */
import { readFileSync } from 'node:fs';
import type { ConformanceCase } from './harness.ts';

/** The installed Deno (the `deno` package's version is the binary's). */
const DENO_VERSION = (JSON.parse(readFileSync(new URL('../../node_modules/deno/package.json', import.meta.url), 'utf8')) as { version: string }).version;

const NET = '--allow-net=127.0.0.1:{port}';
const BASE = 'http://127.0.0.1:{port}';
const READ_WORK = '--allow-read={dir}/work';
const READ_WRITE_HERE = ['--allow-read=.', '--allow-write=.'];
const ENV = { CONF_TOKEN: 'abc', CONF_EMPTY: '', OTHER_SECRET: 'hidden' };
const ok = (stdout: string | RegExp, stderr = '') => ({ stdout, stderr, code: 0 });
const failed = (stderr: string | RegExp, stdout = '') => ({ stdout, stderr, code: 1 });
const denied = (kind: 'net' | 'read' | 'write' | 'env', target: string) =>
  failed(`error: NotCapable: Requires ${kind} access to "${target}", run again with the --allow-${kind} flag\n`);

const pure: ConformanceCase[] = [
  { name: 'pure: arithmetic and number formatting', module: 'pure-sum.ts', params: { numbers: [1, 2.5, 3, -4] } },
  { name: 'pure: empty input gives NaN and infinities', module: 'pure-sum.ts', params: { numbers: [] } },
  {
    name: 'pure: JSON grouping, stringify options and toJSON', module: 'pure-json.ts',
    params: { mode: 'summary', records: [{ team: 'b', name: 'x', score: 1 }, { team: 'a', name: 'z', score: 2 }, { team: 'a', name: 'y', score: 3 }] },
  },
  { name: 'pure: JSON.stringify of a BigInt throws', module: 'pure-json.ts', params: { mode: 'bigint' } },
  { name: 'pure: JSON.parse syntax error message', module: 'pure-json.ts', params: { mode: 'parse-error' } },
  { name: 'pure: JSON.stringify of a cycle (multi-line message)', module: 'pure-json.ts', params: { mode: 'cycle' } },
  { name: 'pure: strings and Unicode', module: 'pure-strings.ts', params: { text: 'Café à la crème' } },
  { name: 'pure: Intl formatting', module: 'pure-intl.ts' },
  { name: 'pure: BigInt and Math', module: 'pure-bigint-math.ts', params: { n: 30 } },
  { name: 'pure: regular expressions', module: 'pure-regex.ts', params: { text: 'on 2024-02-29 paid $12.50 and 1999-12-31 $3' } },
  { name: 'pure: UTC dates', module: 'pure-dates.ts', params: { iso: '2024-02-28T12:00:00Z', days: 2 } },
  { name: 'pure: invalid date', module: 'pure-dates.ts', params: { iso: 'not a date' } },
  { name: 'pure: language features', module: 'pure-language.ts' },
  { name: 'pure: collections and binary data', module: 'pure-collections.ts' },
];

const web: ConformanceCase[] = [
  { name: 'web: URL components and setters', module: 'web-url.ts', params: { url: 'https://user:pw@Example.COM:8080/a/../b/./c?q=1&r=%20#frag' } },
  { name: 'web: URL relative to a base', module: 'web-url.ts', params: { url: '../x/y?z#w', base: 'http://h.example/a/b/c' } },
  { name: 'web: URL with an IDN host', module: 'web-url.ts', params: { url: 'http://bücher.example/straße?ä=1' } },
  { name: 'web: invalid URL TypeError', module: 'web-url.ts', params: { url: 'not a url' } },
  { name: 'web: URLSearchParams', module: 'web-url-search-params.ts', params: { query: '?b=2&a=1&a=0&e=%C3%A9' } },
  { name: 'web: TextEncoder/TextDecoder (UTF-8, UTF-16LE)', module: 'web-text-encoding.ts', params: { text: 'héllo €𝄞', mode: 'utf' } },
  { name: 'web: TextDecoder fatal mode', module: 'web-text-encoding.ts', params: { text: 'x', mode: 'fatal' } },
  { name: 'web: TextDecoder legacy single-byte labels', module: 'web-text-encoding.ts', params: { text: 'x', mode: 'legacy' } },
  {
    name: 'web: TextDecoder multi-byte legacy label', module: 'web-text-encoding.ts', params: { text: 'x', mode: 'multibyte' },
    expectedDifference: {
      reason: 'Paddock\'s TextDecoder carries the single-byte tables but not the large multi-byte indexes (gbk, gb18030, big5, euc-jp, iso-2022-jp, shift_jis, euc-kr), which Deno decodes.',
      deno: ok('gbk 你\n'),
      paddock: failed('error: RangeError: The encoding label provided (\'gb2312\') names gbk, which Paddock\'s sandbox does not support: its TextDecoder knows UTF-8, UTF-16 and the single-byte encodings.\n'),
    },
  },
  { name: 'web: atob/btoa round trip', module: 'web-base64.ts', params: { mode: 'roundtrip', text: 'héllo wörld' } },
  { name: 'web: btoa outside Latin-1', module: 'web-base64.ts', params: { mode: 'encode', text: '€' } },
  { name: 'web: atob of invalid base64', module: 'web-base64.ts', params: { mode: 'decode', text: '***' } },
  { name: 'web: atob without padding', module: 'web-base64.ts', params: { mode: 'decode', text: 'aGVsbG8' } },
  { name: 'web: structuredClone of serializable values', module: 'web-structured-clone.ts', params: { mode: 'values' } },
  {
    name: 'web: structuredClone of a function (DataCloneError shows its source)', module: 'web-structured-clone.ts', params: { mode: 'function' },
    expectedDifference: {
      reason: 'Function.prototype.toString shows the transpiled source: Deno\'s TypeScript emit prints `()=>1`, esbuild (Paddock\'s bundler) `() => 1`.',
      deno: failed('error: DataCloneError: ()=>1 could not be cloned.\n'),
      paddock: failed('error: DataCloneError: () => 1 could not be cloned.\n'),
    },
  },
  { name: 'web: structuredClone of a symbol', module: 'web-structured-clone.ts', params: { mode: 'symbol' } },
  { name: 'web: structuredClone with transfer', module: 'web-structured-clone.ts', params: { mode: 'transfer' } },
  { name: 'web: crypto.randomUUID format and getRandomValues', module: 'web-crypto.ts', params: { mode: 'values' } },
  { name: 'web: getRandomValues quota', module: 'web-crypto.ts', params: { mode: 'quota' } },
  { name: 'web: getRandomValues on a float array', module: 'web-crypto.ts', params: { mode: 'float' } },
  { name: 'web: AbortController events and reasons', module: 'web-abort.ts', params: { mode: 'events' } },
  { name: 'web: throwIfAborted with the default reason', module: 'web-abort.ts', params: { mode: 'throw-default' } },
  { name: 'web: throwIfAborted with an error reason', module: 'web-abort.ts', params: { mode: 'throw-custom' } },
  { name: 'web: throwIfAborted with a string reason', module: 'web-abort.ts', params: { mode: 'throw-string' } },
  { name: 'web: Headers', module: 'web-headers.ts', params: { mode: 'ops' } },
  { name: 'web: Headers with an invalid name', module: 'web-headers.ts', params: { mode: 'bad-name' } },
  { name: 'web: Headers with an invalid value', module: 'web-headers.ts', params: { mode: 'bad-value' } },
  { name: 'web: Request and Response in memory', module: 'web-request-response.ts', params: { mode: 'ops' } },
  { name: 'web: a body read twice', module: 'web-request-response.ts', params: { mode: 'used-twice' } },
  { name: 'web: a GET request with a body', module: 'web-request-response.ts', params: { mode: 'get-with-body' } },
  { name: 'web: EventTarget and CustomEvent', module: 'web-events.ts' },
  { name: 'web: the promised globals exist', module: 'web-globals.ts' },
  {
    name: 'web: no Node globals', module: 'node-globals.ts',
    expectedDifference: {
      reason: 'SPEC §2: nothing of Node is reachable inside an isolate; Deno 2 exposes process, Buffer, global and setImmediate.',
      deno: ok('process:object Buffer:function require:undefined module:undefined global:object setImmediate:function __dirname:undefined\n'),
      paddock: ok('process:undefined Buffer:undefined require:undefined module:undefined global:undefined setImmediate:undefined __dirname:undefined\n'),
    },
  },
  {
    name: 'web: APIs left out on purpose', module: 'unsupported-apis.ts', flags: ['--allow-env'],
    expectedDifference: {
      reason: 'sandbox/guest/README.md: no crypto.subtle, Deno.build, Deno.env.set (NotSupported), WebAssembly, Blob or ReadableStream; Deno.version.deno is the emulated API level 2.0.0.',
      // The Deno version is whatever node_modules/.bin/deno is (package.json pins it), not a constant here.
      deno: ok(`subtle=object\nenv.set=ok:undefined\nbuild=object\nWebAssembly=object\nversion=${DENO_VERSION}\nBlob=function ReadableStream=function\n`),
      paddock: ok('subtle=undefined\nenv.set=NotSupported\nbuild=undefined\nWebAssembly=undefined\nversion=2.0.0\nBlob=undefined ReadableStream=undefined\n'),
    },
  },
];

const timers: ConformanceCase[] = [
  { name: 'timers: ordering of timeouts and microtasks', module: 'timers-order.ts' },
  { name: 'timers: clearTimeout and clearInterval', module: 'timers-clear.ts' },
  { name: 'timers: setInterval ticks', module: 'timers-interval.ts', params: { ticks: 4 } },
  { name: 'timers: AbortSignal.timeout reason', module: 'timers-abort-timeout.ts', params: { mode: 'reason' } },
  { name: 'timers: AbortSignal.timeout throwIfAborted', module: 'timers-abort-timeout.ts', params: { mode: 'throw' } },
];

const errorKinds = ['error', 'empty-message', 'multiline', 'null-access', 'not-a-function', 'range', 'reference', 'uri', 'after-await', 'rejected', 'stack-overflow'];
const customKinds = ['constructor-name', 'field-name', 'unnamed', 'prototype-name', 'cause', 'aggregate', 'deno-error', 'dom-exception'];
const nonErrorKinds = [
  'string', 'number', 'null', 'undefined', 'object-with-message', 'object-without-message', 'error-like-no-name', 'empty-name', 'numeric-name', 'rejected-string',
];

const errors: ConformanceCase[] = [
  ...errorKinds.map((kind) => ({ name: `errors: built-in ${kind}`, module: 'throw-error.ts', params: { kind } })),
  ...customKinds.map((kind) => ({ name: `errors: custom ${kind}`, module: 'throw-custom.ts', params: { kind } })),
  ...nonErrorKinds.map((kind) => ({ name: `errors: thrown non-error ${kind}`, module: 'throw-non-error.ts', params: { kind } })),
  {
    name: 'errors: thrown from a timer callback', module: 'throw-uncaught-timer.ts',
    expectedDifference: {
      reason: 'sandbox/guest/README.md: an error thrown by a timer callback ends the call with that error; Deno ends the program with an uncaught-error report and stack.',
      deno: failed(/^error: Uncaught Error: thrown in a timer\n {4}throw new Error\("thrown in a timer"\);\n {10}\^\n {4}at Timeout\._onTimeout \(\{modules\}\/throw-uncaught-timer\.ts:9:11\)\n(?: {4}at .*\n)+$/),
      paddock: failed('error: Error: thrown in a timer\n'),
    },
  },
];

const results: ConformanceCase[] = [
  ...['metadata', 'is-error', 'is-error-false', 'terminate', 'trailing-newline', 'multi-line', 'empty', 'empty-string', 'unicode']
    .map((kind) => ({ name: `results: ToolResult ${kind}`, module: 'result-object.ts', params: { kind } })),
  ...['number', 'null', 'undefined', 'array', 'content-number', 'no-content', 'metadata-array', 'metadata-string', 'metadata-bigint']
    .map((kind) => ({ name: `results: invalid result ${kind}`, module: 'result-invalid.ts', params: { kind } })),
];

const consoleCases: ConformanceCase[] = [
  { name: 'console: inspection of plain values', module: 'console-values.ts' },
  { name: 'console: stdout and stderr methods', module: 'console-streams.ts' },
  { name: 'console: inspection of Web API objects', module: 'console-web-objects.ts' },
  {
    name: 'console: an Error object with its stack', module: 'console-errors.ts',
    expectedDifference: {
      reason: 'Stack traces show where code runs: Deno gives source positions and file URLs; Paddock gives positions in the bundle and its runtime\'s frames (no source maps, no host paths).',
      deno: ok(/^TypeError: logged error\n {4}at Module\.execute \(\{modules\}\/console-errors\.ts:8:15\)\n {4}at \{harness\}:\d+:\d+\ndone\n$/),
      paddock: ok(/^TypeError: logged error\n {4}at execute \(console-errors\.ts:\d+:\d+\)\n(?: {4}at \S+ \(paddock:runtime:\d+:\d+\)\n)+done\n$/),
    },
  },
  { name: 'console: console.table', module: 'console-table.ts' },
  {
    name: 'console: a promise', module: 'console-promise.ts',
    expectedDifference: {
      reason: 'sandbox/guest/README.md: a promise\'s state is not observable from JS, so Paddock shows `Promise { <unknown> }`.',
      deno: ok('Promise { 1 } Promise { <pending> }\ndone\n'),
      paddock: ok('Promise { <unknown> } Promise { <unknown> }\ndone\n'),
    },
  },
];

const fetchCases: ConformanceCase[] = [
  { name: 'fetch: GET granted by literal 127.0.0.1:PORT', module: 'fetch-text.ts', params: { url: `${BASE}/text` }, flags: [NET] },
  { name: 'fetch: GET granted by host 127.0.0.1 (any port)', module: 'fetch-text.ts', params: { url: `${BASE}/text` }, flags: ['--allow-net=127.0.0.1'] },
  {
    name: 'fetch: --allow-net without a list does not open loopback', module: 'fetch-text.ts', params: { url: `${BASE}/text` }, flags: ['--allow-net'],
    expectedDifference: {
      reason: 'SPEC §3: loopback, private, link-local and metadata addresses are refused unless that literal address is granted; Deno\'s bare --allow-net allows them.',
      deno: ok('200 OK ok=true redirected=false type=basic\nurl=http://127.0.0.1:{port}/text\ncontent-type=text/plain; charset=utf-8\nhello from loopback\n'),
      paddock: denied('net', '127.0.0.1:{port}'),
    },
  },
  { name: 'fetch: wrong host (localhost) is denied', module: 'fetch-text.ts', params: { url: 'http://localhost:{port}/text' }, flags: [NET] },
  { name: 'fetch: wrong port is denied', module: 'fetch-text.ts', params: { url: 'http://127.0.0.1:{port2}/text' }, flags: [NET] },
  { name: 'fetch: no --allow-net is denied', module: 'fetch-text.ts', params: { url: `${BASE}/text` } },
  { name: 'fetch: a 404 is a response, not an error', module: 'fetch-text.ts', params: { url: `${BASE}/missing` }, flags: [NET] },
  { name: 'fetch: a blocked port', module: 'fetch-text.ts', params: { url: 'http://127.0.0.1:1/text' }, flags: ['--allow-net=127.0.0.1:1'] },
  { name: 'fetch: JSON response', module: 'fetch-json.ts', params: { url: `${BASE}/json` }, flags: [NET] },
  { name: 'fetch: response.json() on text', module: 'fetch-json.ts', params: { url: `${BASE}/text` }, flags: [NET] },
  ...['json', 'form', 'bytes', 'put-text'].map((kind) => ({ name: `fetch: request body ${kind} echoed`, module: 'fetch-post.ts', params: { url: `${BASE}/echo`, kind }, flags: [NET] })),
  { name: 'fetch: status codes and HEAD', module: 'fetch-status.ts', params: { base: BASE }, flags: [NET] },
  { name: 'fetch: response and request headers', module: 'fetch-headers.ts', params: { base: BASE }, flags: [NET] },
  { name: 'fetch: redirect within the grant', module: 'fetch-redirect.ts', params: { url: `${BASE}/redirect?to=/text` }, flags: [NET] },
  { name: 'fetch: two redirects (301 then 302)', module: 'fetch-redirect.ts', params: { url: `${BASE}/redirect?to=/redirect%3Fto%3D/json&code=301` }, flags: [NET] },
  { name: 'fetch: 307 redirect', module: 'fetch-redirect.ts', params: { url: `${BASE}/redirect?to=/text&code=307` }, flags: [NET] },
  { name: 'fetch: redirect to an ungranted port is denied', module: 'fetch-redirect.ts', params: { url: `${BASE}/redirect?to=http://127.0.0.1:{port2}/x` }, flags: [NET] },
  { name: 'fetch: redirect to an ungranted host is denied', module: 'fetch-redirect.ts', params: { url: `${BASE}/redirect?to=http://localhost:{port}/text` }, flags: [NET] },
  { name: 'fetch: redirect to another granted port', module: 'fetch-redirect.ts', params: { url: `${BASE}/redirect?to=http://127.0.0.1:{port2}/x` }, flags: ['--allow-net=127.0.0.1'] },
  { name: 'fetch: redirect mode manual', module: 'fetch-redirect.ts', params: { url: `${BASE}/redirect?to=/text`, redirect: 'manual' }, flags: [NET] },
  { name: 'fetch: redirect mode error', module: 'fetch-redirect.ts', params: { url: `${BASE}/redirect?to=/text`, redirect: 'error' }, flags: [NET] },
  { name: 'fetch: a Request object and a URL object', module: 'fetch-request-object.ts', params: { base: BASE }, flags: [NET] },
  { name: 'fetch: an aborted signal', module: 'fetch-abort.ts', params: { url: `${BASE}/text` }, flags: [NET] },
  { name: 'fetch: an aborted signal with a reason', module: 'fetch-abort.ts', params: { url: `${BASE}/text`, reason: 'custom abort' }, flags: [NET] },
  ...['unparsable', 'relative', 'scheme', 'method', 'header'].map((kind) => ({ name: `fetch: invalid input ${kind}`, module: 'fetch-invalid.ts', params: { kind }, flags: ['--allow-net'] })),
  {
    name: 'fetch: the module\'s declared permissions narrow the flags', module: 'declared-narrower.ts', params: { url: `${BASE}/text` }, flags: [NET],
    expectedDifference: {
      reason: 'SPEC §3/§8: paddock run grants the flags ∩ the module\'s `permissions`; Deno ignores the export.',
      deno: ok('hello from loopback\n'),
      paddock: denied('net', '127.0.0.1:{port}'),
    },
  },
];

const symlinkEscape = 'SPEC §3: paths are resolved to real paths (symlinks followed) before the check, so a symlink pointing out of the grant is denied; Deno checks the path as written.';

const files: ConformanceCase[] = [
  { name: 'fs: relative read granted by --allow-read=.', module: 'fs-read.ts', params: { path: 'notes.txt' }, flags: ['--allow-read=.'] },
  { name: 'fs: absolute read inside the grant', module: 'fs-read.ts', params: { path: '{dir}/work/notes.txt' }, flags: [READ_WORK] },
  { name: 'fs: relative `..` escape is denied', module: 'fs-read.ts', params: { path: '../outside/secret.txt' }, flags: [READ_WORK] },
  { name: 'fs: absolute path outside is denied', module: 'fs-read.ts', params: { path: '{dir}/outside/secret.txt' }, flags: [READ_WORK] },
  { name: 'fs: absolute `..` escape is denied (normalized path in the message)', module: 'fs-read.ts', params: { path: '{dir}/work/../outside/secret.txt' }, flags: [READ_WORK] },
  { name: 'fs: `..` that stays inside', module: 'fs-read.ts', params: { path: 'sub/../notes.txt' }, flags: [READ_WORK] },
  { name: 'fs: grant of a subfolder', module: 'fs-read.ts', params: { path: 'sub/deep.txt' }, flags: ['--allow-read={dir}/work/sub'] },
  { name: 'fs: read beside a subfolder grant is denied', module: 'fs-read.ts', params: { path: 'notes.txt' }, flags: ['--allow-read={dir}/work/sub'] },
  { name: 'fs: symlink that stays inside', module: 'fs-read.ts', params: { path: 'link-in.txt' }, flags: [READ_WORK] },
  {
    name: 'fs: symlink pointing out', module: 'fs-read.ts', params: { path: 'link-out.txt' }, flags: [READ_WORK],
    expectedDifference: { reason: symlinkEscape, deno: ok('secret outside the grant\n'), paddock: denied('read', 'link-out.txt') },
  },
  {
    name: 'fs: directory symlink pointing out', module: 'fs-read.ts', params: { path: 'link-dir-out/secret.txt' }, flags: [READ_WORK],
    expectedDifference: { reason: symlinkEscape, deno: ok('secret outside the grant\n'), paddock: denied('read', 'link-dir-out/secret.txt') },
  },
  { name: 'fs: missing file', module: 'fs-read.ts', params: { path: 'missing.txt' }, flags: [READ_WORK] },
  { name: 'fs: no --allow-read is denied', module: 'fs-read.ts', params: { path: 'notes.txt' } },
  { name: 'fs: bare --allow-read', module: 'fs-read.ts', params: { path: 'notes.txt' }, flags: ['--allow-read'] },
  { name: 'fs: reading a directory as a file', module: 'fs-read.ts', params: { path: 'sub' }, flags: ['--allow-read=.'] },
  { name: 'fs: write and overwrite', module: 'fs-write.ts', params: { path: 'out.txt', mode: 'create' }, flags: READ_WRITE_HERE },
  { name: 'fs: append', module: 'fs-write.ts', params: { path: 'out.txt', mode: 'append' }, flags: READ_WRITE_HERE },
  { name: 'fs: createNew on an existing file', module: 'fs-write.ts', params: { path: 'notes.txt', mode: 'create-new' }, flags: READ_WRITE_HERE },
  { name: 'fs: create:false on a missing file', module: 'fs-write.ts', params: { path: 'absent.txt', mode: 'no-create' }, flags: READ_WRITE_HERE },
  { name: 'fs: write with only a read grant is denied', module: 'fs-write.ts', params: { path: 'out.txt', mode: 'create' }, flags: ['--allow-read=.'] },
  { name: 'fs: write `..` escape is denied', module: 'fs-write.ts', params: { path: '../outside/new.txt', mode: 'create' }, flags: ['--allow-read', '--allow-write={dir}/work'] },
  {
    name: 'fs: write through a symlink pointing out', module: 'fs-write.ts', params: { path: 'link-out.txt', mode: 'create' }, flags: ['--allow-read', '--allow-write={dir}/work'],
    expectedDifference: { reason: symlinkEscape, deno: ok('overwritten by the tool ✓\n'), paddock: denied('write', 'link-out.txt') },
  },
  { name: 'fs: write grant of a subfolder', module: 'fs-write.ts', params: { path: 'sub/new.txt', mode: 'create' }, flags: [READ_WORK, '--allow-write={dir}/work/sub'] },
  { name: 'fs: binary round trip', module: 'fs-binary.ts', params: { from: 'data.bin', to: 'copy.bin' }, flags: READ_WRITE_HERE },
  { name: 'fs: readDir of the working directory', module: 'fs-readdir.ts', params: { path: '.' }, flags: ['--allow-read=.'] },
  { name: 'fs: readDir by absolute path', module: 'fs-readdir.ts', params: { path: '{dir}/work/sub' }, flags: [READ_WORK] },
  { name: 'fs: readDir of `..` is denied', module: 'fs-readdir.ts', params: { path: '..' }, flags: [READ_WORK] },
  {
    name: 'fs: readDir through a directory symlink pointing out', module: 'fs-readdir.ts', params: { path: 'link-dir-out' }, flags: [READ_WORK],
    expectedDifference: {
      reason: symlinkEscape,
      deno: ok('secret.txt file=true dir=false symlink=false keys=name,isFile,isDirectory,isSymlink\n'),
      paddock: denied('read', 'link-dir-out'),
    },
  },
  { name: 'fs: stat of a file', module: 'fs-stat.ts', params: { path: 'notes.txt' }, flags: ['--allow-read=.'] },
  { name: 'fs: stat of a directory', module: 'fs-stat.ts', params: { path: 'sub' }, flags: ['--allow-read=.'] },
  { name: 'fs: stat and lstat of a symlink', module: 'fs-stat.ts', params: { path: 'link-in.txt' }, flags: ['--allow-read=.'] },
  { name: 'fs: stat of a missing path', module: 'fs-stat.ts', params: { path: 'missing' }, flags: ['--allow-read=.'] },
  { name: 'fs: stat without a grant is denied', module: 'fs-stat.ts', params: { path: 'notes.txt' } },
  {
    name: 'fs: FileInfo device and inode fields', module: 'fs-stat-details.ts', params: { path: 'notes.txt' }, flags: ['--allow-read=.'],
    expectedDifference: {
      reason: 'Paddock\'s fs protocol carries no device/inode data: dev is 0 and ino, nlink, uid, gid, ctime ... are null (Deno\'s key order is kept).',
      deno: ok('dev=true ino=number nlink=1 uid=number ctime=true mode=number\n'),
      paddock: ok('dev=false ino=object nlink=null uid=object ctime=false mode=number\n'),
    },
  },
  { name: 'fs: mkdir and remove lifecycle', module: 'fs-mkdir-remove.ts', params: { root: '{dir}/work', step: 'lifecycle' }, flags: READ_WRITE_HERE },
  ...['mkdir-existing', 'mkdir-missing-parent', 'remove-non-empty', 'remove-missing'].map((step) => ({
    name: `fs: ${step}`, module: 'fs-mkdir-remove.ts', params: { root: '{dir}/work', step }, flags: READ_WRITE_HERE,
  })),
  { name: 'fs: mkdir without a write grant is denied', module: 'fs-mkdir-remove.ts', params: { root: '{dir}/work', step: 'lifecycle' }, flags: ['--allow-read=.'] },
  { name: 'fs: error classes and messages', module: 'fs-errors.ts', params: { root: '{dir}/work' }, flags: READ_WRITE_HERE },
  { name: 'fs: Deno.cwd and relative reads', module: 'fs-cwd.ts', flags: [READ_WORK] },
  { name: 'fs: Deno.cwd with a single-file grant', module: 'fs-cwd.ts', flags: ['--allow-read={dir}/work/notes.txt'] },
  { name: 'fs: Deno.cwd without a grant', module: 'fs-cwd.ts' },
  { name: 'fs: file URLs as paths', module: 'fs-file-url.ts', params: { dir: '{dir}/work', kind: 'ok' }, flags: READ_WRITE_HERE },
  {
    name: 'fs: an http URL as a path', module: 'fs-file-url.ts', params: { dir: '{dir}/work', kind: 'http' }, flags: READ_WRITE_HERE,
    expectedDifference: {
      reason: 'Paddock ends the message with a period (sandbox/guest/deno.ts, pinned by test/sandbox/guest/deno.test.ts); Deno does not.',
      deno: failed('error: TypeError: Must be a file URL\n'),
      paddock: failed('error: TypeError: Must be a file URL.\n'),
    },
  },
  { name: 'fs: a file URL with a host', module: 'fs-file-url.ts', params: { dir: '{dir}/work', kind: 'host' }, flags: READ_WRITE_HERE },
  { name: 'fs: a path with a NUL byte', module: 'fs-file-url.ts', params: { dir: '{dir}/work', kind: 'nul' }, flags: READ_WRITE_HERE },
  {
    name: 'fs: a path with a NUL byte and no grant', module: 'fs-file-url.ts', params: { dir: '{dir}/work', kind: 'nul' },
    expectedDifference: {
      reason: 'Paddock\'s guest refuses a NUL byte before asking the host; Deno checks the permission first and names the path (NUL included) in the denial.',
      deno: denied('read', 'notes\0.txt'),
      paddock: failed('error: TypeError: file name contained an unexpected NUL byte\n'),
    },
  },
];

const env: ConformanceCase[] = [
  { name: 'env: a granted variable', module: 'env-vars.ts', params: { names: ['CONF_TOKEN'] }, flags: ['--allow-env=CONF_TOKEN'], env: ENV },
  { name: 'env: granted but unset, and empty', module: 'env-vars.ts', params: { names: ['CONF_TOKEN', 'CONF_UNSET', 'CONF_EMPTY'] }, flags: ['--allow-env=CONF_TOKEN,CONF_UNSET,CONF_EMPTY'], env: ENV },
  { name: 'env: an ungranted variable is denied', module: 'env-vars.ts', params: { names: ['OTHER_SECRET'] }, flags: ['--allow-env=CONF_TOKEN'], env: ENV },
  { name: 'env: names are case-sensitive', module: 'env-vars.ts', params: { names: ['conf_token'] }, flags: ['--allow-env=CONF_TOKEN'], env: ENV },
  { name: 'env: no --allow-env is denied', module: 'env-vars.ts', params: { names: ['CONF_TOKEN'] }, env: ENV },
  { name: 'env: toObject with a partial grant is denied', module: 'env-vars.ts', params: { names: [], all: true }, flags: ['--allow-env=CONF_TOKEN'], env: ENV },
  { name: 'env: toObject with bare --allow-env', module: 'env-vars.ts', params: { names: ['CONF_TOKEN'], all: true }, flags: ['--allow-env'], env: ENV },
  { name: 'env: a PREFIX_* grant', module: 'env-vars.ts', params: { names: ['CONF_TOKEN', 'CONF_EMPTY'] }, flags: ['--allow-env=CONF_*'], env: ENV },
  { name: 'env: outside a PREFIX_* grant is denied', module: 'env-vars.ts', params: { names: ['OTHER_SECRET'] }, flags: ['--allow-env=CONF_*'], env: ENV },
  { name: 'env: an empty name', module: 'env-invalid.ts', params: { name: '' }, flags: ['--allow-env'] },
  { name: 'env: a name with "="', module: 'env-invalid.ts', params: { name: 'A=B' }, flags: ['--allow-env'] },
  { name: 'env: an invalid name without a grant is denied first', module: 'env-invalid.ts', params: { name: 'A=B' } },
  { name: 'env: an empty name without a grant is denied first', module: 'env-invalid.ts', params: { name: '' } },
  {
    name: 'env: NO_COLOR without a grant', module: 'env-vars.ts', params: { names: ['NO_COLOR'] },
    expectedDifference: {
      reason: 'Deno lets any program read a few Node-compat variables (NO_COLOR, NODE_DEBUG, ...) without --allow-env; Paddock reads only granted names.',
      deno: ok('NO_COLOR: has=true value="1"\n'),
      paddock: denied('env', 'NO_COLOR'),
    },
  },
];

const permissions: ConformanceCase[] = [
  {
    name: 'permissions: query with list grants', module: 'permissions-query.ts',
    params: {
      descriptors: [
        { name: 'net', host: '127.0.0.1:{port}' }, { name: 'net', host: '127.0.0.1' }, { name: 'net' }, { name: 'net', host: 'example.com' },
        { name: 'read', path: '{dir}/work/notes.txt' }, { name: 'read', path: '{dir}' }, { name: 'read' }, { name: 'read', path: 'notes.txt' },
        { name: 'read', path: '../outside' }, { name: 'write' }, { name: 'write', path: 'x' }, { name: 'env', variable: 'CONF_TOKEN' },
        { name: 'env', variable: 'OTHER' }, { name: 'env' }, { name: 'run' }, { name: 'sys' },
      ],
    },
    flags: [NET, READ_WORK, '--allow-env=CONF_TOKEN'],
  },
  {
    name: 'permissions: query with bare flags', module: 'permissions-query.ts',
    params: { descriptors: [{ name: 'net' }, { name: 'read', path: 'notes.txt' }, { name: 'env', variable: 'X' }, { name: 'write' }] },
    flags: ['--allow-net', '--allow-read', '--allow-env', '--allow-write'],
  },
  { name: 'permissions: query without flags', module: 'permissions-query.ts', params: { descriptors: [{ name: 'net' }, { name: 'read' }, { name: 'env' }, { name: 'write' }] } },
  { name: 'permissions: an unknown permission name', module: 'permissions-query.ts', params: { descriptors: [{ name: 'bogus' }] } },
];

const modules: ConformanceCase[] = [
  { name: 'imports: relative TypeScript and JSON imports', module: 'imports-relative.ts', params: { items: ['alpha', 'BETA'] } },
  { name: 'update: progress lines on stderr', module: 'update-progress.ts', params: { steps: 3 } },
  { name: 'update: the ctx object', module: 'update-ctx.ts' },
  // paddock run prints console lines and updates as they happen, as Deno does: their order on stderr is the same.
  { name: 'update: order of updates and console.error on stderr', module: 'update-interleaved.ts' },
];

export const CASES: readonly ConformanceCase[] = [
  ...pure, ...web, ...timers, ...errors, ...results, ...consoleCases, ...fetchCases, ...files, ...env, ...permissions, ...modules,
];
