/**
 * Pins: TextEncoder/TextDecoder and atob/btoa inside the isolate behave as in Deno 2, down to the
 * error class, name and message (compared with the real Deno binary).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { denoEvaluate } from './helpers/deno.ts';
import { createGuest, evaluate, type Guest } from './helpers/fake-host.ts';

let guest: Guest;
beforeAll(async () => { guest = await createGuest(); });
afterAll(() => { guest.dispose(); });

// Each case is an expression; the harness records its value or its error as plain data.
const CASES = [
  'new TextDecoder("foo")',
  'new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xff]))',
  'new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xe2, 0x82]))',
  'new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41, 0xff, 0xc3]))',
  'new TextDecoder().decode(new Uint8Array([0xf0, 0x9f, 0x98, 0x80, 0xed, 0xa0, 0x80, 0xc0, 0x80]))',
  'new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]))',
  'new TextDecoder(" UTF8 ").encoding',
  'new TextDecoder("utf-16le").decode(new Uint8Array([0x41, 0, 0x3d, 0xd8, 0x00, 0xde]))',
  '(() => { const d = new TextDecoder(); return d.decode(new Uint8Array([0xe2, 0x82]), { stream: true }) + "|" + d.decode(new Uint8Array([0xac])); })()',
  'new TextDecoder().decode("abc")',
  'new TextDecoder().decode(new Uint8Array([104, 105]).buffer)',
  'new TextDecoder().decode(new DataView(new Uint8Array([0, 104, 105]).buffer, 1))',
  'new TextDecoder().decode()',
  'new TextDecoder().fatal + "," + new TextDecoder("utf-8", { fatal: 1 }).fatal',
  'Array.from(new TextEncoder().encode("\\ud800a€😀"))',
  'new TextEncoder().encodeInto("héllo", new Uint8Array(3))',
  'new TextEncoder().encodeInto("a😀", new Uint8Array(4))',
  'new TextEncoder().encoding',
  'atob("a")', 'atob("ab")', 'atob("YQ")', 'atob(" Y Q = = ")', 'atob("YQ=")', 'atob("Y*==")', 'atob("YQ==YQ==")',
  'atob(undefined)', 'atob(null)', 'atob("\\t\\nYWJj\\f\\r")', 'atob("YW=J")', 'atob("")',
  'btoa("é")', 'btoa("€")', 'btoa("")', 'btoa(null)', 'btoa(String.fromCharCode(0, 255, 128))',
];

const PROGRAM = `
const out = [];
for (const source of ${JSON.stringify(CASES)}) {
  try {
    const value = (0, eval)(source);
    out.push({ ok: value === undefined ? null : JSON.parse(JSON.stringify(value)) });
  } catch (e) {
    out.push({ error: [e.constructor.name === 'QuotaExceededError' ? 'DOMException' : e.constructor.name, e.name, e.message, e.code ?? null] });
  }
}
return out;`;

describe('encoding, compared with Deno 2', () => {
  it('gives the same values and the same errors for every case', async () => {
    const [ours, deno] = await Promise.all([evaluate(guest, PROGRAM), denoEvaluate(PROGRAM)]);
    const label = (results: unknown): unknown[] => CASES.map((source, i) => ({ source, result: (results as unknown[])[i] }));
    expect(label(ours)).toEqual(label(deno));
  });
});

describe('encoding details', () => {
  it('round-trips large and multi-byte text', async () => {
    const result = await evaluate(guest, `
      const text = "a€😀".repeat(50000);
      const bytes = new TextEncoder().encode(text);
      return [bytes.length, new TextDecoder().decode(bytes) === text, atob(btoa("\\u00ff".repeat(70000))).length];`);
    expect(result).toEqual([400000, true, 70000]);
  });

  it('streams a UTF-8 sequence split over many chunks', async () => {
    const result = await evaluate(guest, `
      const bytes = new TextEncoder().encode("x😀y€");
      const d = new TextDecoder();
      let out = "";
      for (const b of bytes) out += d.decode(new Uint8Array([b]), { stream: true });
      return out + d.decode();`);
    expect(result).toBe('x😀y€');
  });
});
