/**
 * Pins: TextDecoder inside the isolate knows every label of the Encoding Standard that Deno 2
 * knows, returns the same canonical `encoding`, decodes all 256 bytes of every single-byte
 * encoding as Deno does (U+FFFD or a TypeError for unmapped bytes), and streams UTF-16BE/LE
 * (split code units and surrogate pairs, BOMs, fatal errors mid-stream) exactly like Deno. The
 * multi-byte legacy encodings are the one pinned difference: Deno decodes them, Paddock throws a
 * RangeError naming the encoding. One Deno process runs every case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENCODING_LABELS, SINGLE_BYTE_TABLES } from '../../../sandbox/guest/single-byte-encodings.ts';
import { denoEvaluate } from './helpers/deno.ts';
import { createGuest, evaluate, type Guest } from './helpers/fake-host.ts';

const UNSUPPORTED = ['gbk', 'gb18030', 'big5', 'euc-jp', 'iso-2022-jp', 'shift_jis', 'euc-kr'];

const NAMES = Object.keys(ENCODING_LABELS);
const SUPPORTED_LABELS = NAMES.filter((name) => !UNSUPPORTED.includes(name)).flatMap((name) => (ENCODING_LABELS[name] ?? '').split(' '));
const UNSUPPORTED_LABELS = UNSUPPORTED.flatMap((name) => (ENCODING_LABELS[name] ?? '').split(' '));
const SINGLE_BYTE = [...Object.keys(SINGLE_BYTE_TABLES), 'iso-8859-8-i', 'x-user-defined'];

/** Labels that are not plain: case, whitespace (ASCII only counts), the replacement encoding, near misses. */
const ODD_LABELS = [
  'LATIN1', ' Windows-1252\n', '\tus-ascii\r\n', '\fkoi8-u ', 'UTF-16BE', 'UnicodeFFFE', 'ISO_8859-8:1988', 'X-MAC-UKRAINIAN',
  '\vutf-8', '\u00a0latin1', '\u212Aoi8-r', 'latın1', 'utf-8\u0000', 'latin 1', 'latin1;', '', 'utf-32', 'iso-8859-9-i', 'iso-8859-12',
  'replacement', 'iso-2022-kr', 'csiso2022kr', 'hz-gb-2312', 'iso-2022-cn', 'iso-2022-cn-ext', 'x-user-defined ', 'null',
];

/** Byte sequences for the UTF-16 decoders, written big-endian; the LE variant swaps each pair. */
const UTF16_SEQUENCES: number[][] = [
  [0xfe, 0xff, 0x00, 0x41, 0xd8, 0x3d, 0xde, 0x00, 0x00, 0x42],
  [0xff, 0xfe, 0x00, 0x41],
  [0xfe, 0xff, 0xfe, 0xff, 0x00, 0x41],
  [0x00, 0x41, 0xd8, 0x3d],
  [0xd8, 0x3d, 0xd8, 0x3d, 0xde, 0x00],
  [0xd8, 0x3d, 0x00, 0x41, 0x00],
  [0xd8, 0x3d, 0xd8],
  [0xdc, 0x00, 0xd8, 0x00, 0xdc, 0x00, 0x26, 0x03],
  [0x00, 0x41, 0x00],
  [0xd8, 0x00, 0xfe, 0xff, 0x00, 0x43],
  [0x30, 0x42, 0xd8, 0x3d, 0xde, 0x00, 0xdb, 0xff, 0xdf, 0xff],
];

const PROGRAM = `
const error = (e) => ['ERROR', e.constructor.name, e.name, e.message, e.code ?? null];
const attempt = (f) => { try { return f(); } catch (e) { return error(e); } };
const out = {};

out.labels = {};
for (const label of ${JSON.stringify([...SUPPORTED_LABELS, ...ODD_LABELS])}) {
  out.labels[JSON.stringify(label)] = attempt(() => new TextDecoder(label).encoding);
}
out.unsupported = {};
for (const label of ${JSON.stringify(UNSUPPORTED_LABELS)}) {
  out.unsupported[label] = attempt(() => new TextDecoder(label).encoding);
}

const all = new Uint8Array(256).map((_, i) => i);
out.singleByte = {};
for (const name of ${JSON.stringify(SINGLE_BYTE)}) {
  const fatalErrors = [];
  for (let byte = 0; byte < 256; byte++) {
    const result = attempt(() => new TextDecoder(name, { fatal: true }).decode(new Uint8Array([0x41, byte])));
    if (Array.isArray(result)) fatalErrors.push(byte, ...result);
    else if (result !== new TextDecoder(name).decode(new Uint8Array([0x41, byte]))) fatalErrors.push(byte, 'differs', result);
  }
  const streaming = new TextDecoder(name);
  let streamed = '';
  for (let i = 0; i < 256; i += 7) streamed += streaming.decode(all.subarray(i, i + 7), { stream: true });
  streamed += streaming.decode();
  out.singleByte[name] = {
    text: new TextDecoder(name).decode(all),
    streamedSame: streamed === new TextDecoder(name).decode(all),
    bom: [new TextDecoder(name).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0xfe, 0xff])), new TextDecoder(name, { ignoreBOM: true }).decode(new Uint8Array([0xff, 0xfe]))],
    fatalErrors,
    inspect: Deno.inspect(new TextDecoder(name, { fatal: true })),
  };
}

const swap = (bytes) => bytes.map((_, i) => bytes[i % 2 === 0 ? (i + 1 < bytes.length ? i + 1 : i) : i - 1]);
const runStream = (label, options, chunks) => {
  const decoder = new TextDecoder(label, options);
  const pieces = [];
  for (let i = 0; i < chunks.length; i++) {
    const last = i === chunks.length - 1;
    pieces.push(attempt(() => decoder.decode(new Uint8Array(chunks[i]), last ? undefined : { stream: true })));
  }
  return pieces;
};
out.utf16 = [];
for (const be of ${JSON.stringify(UTF16_SEQUENCES)}) {
  for (const label of ['utf-16be', 'utf-16le']) {
    const bytes = label === 'utf-16be' ? be : swap(be);
    for (const options of [{}, { fatal: true }, { ignoreBOM: true }]) {
      const row = { label, bytes, options, whole: attempt(() => new TextDecoder(label, options).decode(new Uint8Array(bytes))) };
      row.bytewise = runStream(label, options, [...bytes.map((b) => [b]), []]);
      row.splits = [];
      for (let cut = 0; cut <= bytes.length; cut++) row.splits.push(runStream(label, options, [bytes.slice(0, cut), bytes.slice(cut)]));
      out.utf16.push(row);
    }
  }
}

// After a fatal error a streaming decoder goes on (and drops the rest of the chunk); a final call starts afresh.
out.afterError = [
  runStream('utf-16be', { fatal: true }, [[0, 0x41, 0xd8], [0x00, 0, 0x41, 0, 0x42], [0xfe, 0xff, 0, 0x43]]),
  runStream('utf-16be', { fatal: true }, [[0xd8, 0x00, 0xd8, 0x01], [0xdc, 0x00], []]),
  runStream('utf-16be', { fatal: true }, [[0xd8, 0x00, 0x00, 0x41, 0, 0x43], [0x00, 0x42]]),
  runStream('utf-16be', { fatal: true }, [[0xd8, 0x00], [0x00, 0x41], [0x00, 0x42]]),
  runStream('utf-16be', { fatal: true }, [[0xd8], [0x00, 0x00, 0x41, 0x00, 0x44], [0xfe, 0xff, 0x00, 0x42]]),
  runStream('utf-16be', { fatal: true }, [[0xd8, 0x00], [0xd8, 0x00], [0xdc, 0x00]]),
  runStream('utf-16be', { fatal: true }, [[0xd8, 0x00, 0x00], [0x41, 0x00, 0x42], []]),
  runStream('utf-16be', { fatal: true }, [[0x00, 0x40, 0xdc, 0x00, 0xfe], [0xff, 0x42]]),
  runStream('utf-16be', { fatal: true }, [[0xdc, 0x00, 0xfe, 0xff], [0xfe, 0xff, 0x42]]),
  runStream('utf-16be', { fatal: true }, [[0xdc, 0x00, 0, 0x41], [0xfe, 0xff, 0, 0x42]]),
  runStream('utf-16le', { fatal: true }, [[0x3d, 0xd8, 0x41, 0], [0xff, 0xfe]]),
  runStream('utf-8', { fatal: true }, [[0xef, 0xbb, 0xbf, 0x41, 0xe2], [0x41, 0x42], [0xef, 0xbb, 0xbf, 0x43]]),
  runStream('utf-8', { fatal: true }, [[0xff], [0xef, 0xbb, 0xbf, 0x43], []]),
  runStream('utf-8', { fatal: true }, [[0x41, 0xff]]).concat(runStream('utf-8', { fatal: true }, [[0xef, 0xbb, 0xbf, 0x44]])),
  runStream('windows-1253', { fatal: true }, [[0xe1], [0xaa, 0xe2], [0xe3]]),
  (() => {
    const decoder = new TextDecoder('utf-16be', { fatal: true });
    return [attempt(() => decoder.decode(new Uint8Array([0xdc, 0x00]))), decoder.decode(new Uint8Array([0xfe, 0xff, 0, 0x41]))];
  })(),
];

out.misc = [
  attempt(() => new TextDecoder('latin1').decode(new Uint8Array([0x80, 0x81, 0x9f, 0xe9]))),
  attempt(() => new TextDecoder('ascii').decode(new Uint8Array([0x80, 0x41]))),
  attempt(() => new TextDecoder('windows-874', { fatal: true }).decode(new Uint8Array([0xdb]))),
  attempt(() => new TextDecoder('koi8-r').decode(new Uint8Array([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]).buffer)),
  attempt(() => new TextDecoder('iso-8859-2').decode(new DataView(new Uint8Array([0, 0xa1, 0xb1]).buffer, 1))),
  attempt(() => new TextDecoder('windows-1251').decode()),
  attempt(() => new TextDecoder('windows-1251').decode('x')),
  attempt(() => new TextDecoder('utf-16be', null).decode(new Uint8Array([0, 0x41]), null)),
  attempt(() => [new TextDecoder('latin1', { fatal: 1, ignoreBOM: 'yes' }).fatal, new TextDecoder('latin1', { fatal: 1, ignoreBOM: 'yes' }).ignoreBOM]),
  attempt(() => new TextDecoder('utf-16be').decode(new Uint8Array(70001).fill(0x30)).length),
  attempt(() => new TextEncoder().encoding),
  attempt(() => new TextDecoder('latin1', 5)),
  attempt(() => new TextDecoder('latin1').decode(new Uint8Array([0xe9]), 'stream')),
  attempt(() => new TextDecoder('latin1', () => 1).decode(new Uint8Array([0xe9]), () => 1)),
];
return out;`;

let guest: Guest;
beforeAll(async () => { guest = await createGuest(); });
afterAll(() => { guest.dispose(); });

describe('TextDecoder encodings, compared with Deno 2', () => {
  let ours: Record<string, unknown>;
  let deno: Record<string, unknown>;
  beforeAll(async () => {
    [ours, deno] = (await Promise.all([evaluate(guest, PROGRAM), denoEvaluate(PROGRAM)])) as [Record<string, unknown>, Record<string, unknown>];
  }, 30_000);

  it('resolves every label, odd spellings and the replacement labels as Deno does', () => {
    expect(ours.labels).toEqual(deno.labels);
    expect(Object.keys(ours.labels as object)).toHaveLength(SUPPORTED_LABELS.length + ODD_LABELS.length);
  });

  it('decodes all 256 bytes of every single-byte encoding as Deno does, fatal errors included', () => {
    expect(Object.keys(ours.singleByte as object)).toHaveLength(29);
    expect(ours.singleByte).toEqual(deno.singleByte);
  });

  it('decodes UTF-16BE and UTF-16LE whole, byte by byte and split anywhere as Deno does', () => {
    expect((ours.utf16 as unknown[]).length).toBe(UTF16_SEQUENCES.length * 6);
    expect(ours.utf16).toEqual(deno.utf16);
  });

  it('goes on after a fatal error as Deno does', () => {
    expect(ours.afterError).toEqual(deno.afterError);
  });

  it('handles buffer sources, defaults and large inputs as Deno does', () => {
    expect(ours.misc).toEqual(deno.misc);
  });

  it('throws a RangeError naming the multi-byte encodings Deno decodes but the sandbox lacks', () => {
    expect(Object.values(deno.unsupported as object).every((value) => UNSUPPORTED.includes(value as string))).toBe(true);
    expect((ours.unsupported as Record<string, unknown>)['gb2312']).toEqual([
      'ERROR', 'RangeError', 'RangeError',
      'The encoding label provided (\'gb2312\') names gbk, which Paddock\'s sandbox does not support: its TextDecoder knows UTF-8, UTF-16 and the single-byte encodings.',
      'ERR_ENCODING_NOT_SUPPORTED',
    ]);
    for (const [label, result] of Object.entries(ours.unsupported as Record<string, unknown[]>)) {
      expect(result[3]).toContain(`('${label}') names ${(deno.unsupported as Record<string, string>)[label] ?? '?'}, which Paddock's sandbox does not support`);
    }
  });
});
