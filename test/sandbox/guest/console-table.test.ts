/**
 * Pins: console.table inside the isolate prints Deno 2's box-drawing table byte for byte: the
 * "(idx)" / "(iter idx)" column, one column per key (or per requested property, in Deno's
 * order), "Values" for primitive rows, cells inspected one level deep on one line, integer
 * columns right-aligned, widths counted in terminal columns (wide, combining and zero-width
 * characters, escape sequences). A non-object argument is logged as console.log would log it,
 * and a properties argument that is not an array throws Deno's Error. One Deno process runs it all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDeno } from './helpers/deno.ts';
import { createGuest, evaluate, type Guest } from './helpers/fake-host.ts';

const CASES = [
  // shapes
  'console.table([{ a: 1, b: "x" }, { a: 22, c: true }]);',
  'console.table([[1, 2], [3, 4, 5]]);',
  'console.table({ r1: { a: 1 }, r2: { b: 2.5 } });',
  'console.table([1, "two", null, undefined, 3n, Symbol("s"), -0, NaN]);',
  'console.table([{ a: 1 }, 5, "s", null, undefined]);',
  'console.table({ a: [1, 2], b: "str", c: { d: 1 } });',
  'console.table([]); console.table({}); console.table([[]]); console.table([{}]);',
  'console.table([, { a: 1 }]);',
  'console.table(Object.assign([{ a: 1 }], { extra: { a: 2 } }));',
  'console.table([new Date(0), /re/, [1, 2, 3]]);',
  'console.table([{ "1": "one", "0": "zero", x: 1 }]);',
  'console.table([{ toString: 1, constructor: 2, hasOwnProperty: 3 }]);',
  'console.table(JSON.parse(\'[{"__proto__": 1, "b": 2}]\'));',
  'console.table([{ "": 1, a: 2 }]);',
  'console.table([{ a: 1, get g() { return 2; } }]);',
  'console.table([Object.create({ inherited: 1 })]);',
  // properties filter
  'console.table([{ a: 1, b: 2 }, { a: 3, b: 4 }], ["b"]);',
  'console.table([{ a: 1, b: 2 }, 7], ["b", "zz"]);',
  'console.table([{ a: 1 }], ["a", "a"]);',
  'console.table([{ a: 1 }], []);',
  'console.table([{ a: 1 }], [1]);',
  'console.table([{ 1: "x", a: 1 }], ["a", "1"]);',
  'console.table([{ a: 1 }], ["", "a"]);',
  'console.table([1, 2], ["a"]);',
  'console.table([{ a: 1 }], undefined);',
  'console.table([{ __proto__: { inherited: 1 }, own: 2 }], ["inherited", "own"]);',
  'console.table(new Map([["a", { x: 1 }]]), ["x"]);',
  'console.table(new Set([{ a: 1 }, 2]), ["a"]);',
  // non-objects and bad properties
  'console.table("hello"); console.table(5); console.table(null); console.table(); console.table(() => 1); console.table(10n);',
  'for (const p of ["a", 5, {}, null]) { try { console.table([], p); } catch (e) { console.log(e.constructor.name, e.name, e.message); } }',
  'try { console.table("a", "b"); } catch (e) { console.log(e.constructor.name, e.message); }',
  // Set, Map and other iterables
  'console.table(new Map([["k", 1], ["j", { a: 1 }], [{ k: 1 }, [2]]]));',
  'console.table(new Set([1, "a", { b: 2 }]));',
  'console.table(new Uint8Array([1, 2, 250]));',
  'console.table((function* () { yield { a: 1 }; yield 2; })());',
  'console.table({ [Symbol.iterator]: function* () { yield { a: 1 }; }, x: 1 });',
  'console.table(new String("ab"));',
  'console.table(new Map([[1, 2]]).values());',
  '(function () { console.table(arguments); })(1, { a: 2 });',
  'console.table(new (class Bag extends Set {})([3]));',
  // cells
  'console.table([{ a: { b: { c: { d: 1 } } }, e: [1, [2, [3]]], f: [{ b: 1 }, { c: { d: 1 } }] }]);',
  'console.table([{ a7: [1, 2, 3, 4, 5, 6, 7], set: new Set([1, "x"]), map: new Map([[1, { z: 1 }]]), inst: new (class Foo { constructor() { this.q = 1; } })() }]);',
  'console.table([{ long: { a: "y".repeat(40), b: "z".repeat(40), c: 1 }, arr: new Array(150).fill(1) }]);',
  'console.table([{ big: Object.fromEntries(Array.from({ length: 30 }, (_, i) => ["key" + i, i])) }]);',
  'console.table([{ sym: Symbol("a b"), u8: new Uint8Array(3), date: new Date(0), nul: null, undef: undefined, neg: -0, nan: NaN, inf: -Infinity, big: 12n }]);',
  'console.table([{ empty: {}, earr: [], fn: function () {}, named: function named() {}, arrow: () => {}, cls: class {}, ab: new ArrayBuffer(2) }]);',
  'console.table([{ circ: (() => { const o = { n: 1 }; o.self = o; return o; })() }]);',
  'console.table([{ o: Object.create(null, { x: { value: 1, enumerable: true } }), f: Object.assign(function f() {}, { a: 1 }), d: Object.assign(new Date(0), { x: 1 }), n: Object.assign(new Number(1), { y: 2 }) }]);',
  'console.table([{ s: "a\\nb", t: "it\'s \\"q\\"", u: "\\"\'`", v: "\\"\'${x}", w: "tab\\there", x: "\\u0007bell" }]);',
  'console.table([{ s: "x".repeat(10003), t: { inner: "y".repeat(10002) } }].map((row) => ({ s: row.s.length, head: row.s.slice(0, 5), t: row.t })));',
  'console.table([{ s: "x".repeat(10003) }]);',
  'console.table([{ u: new URL("https://a.b/c?d"), h: new Headers({ a: "1" }), p: new URLSearchParams("a=1") }]);',
  'console.table([{ w: new WeakMap(), e: new Event("x") }]);',
  // alignment
  'console.table([{ a: "x".repeat(3), b: -1, c: 1.5, d: "", e: 0x10, f: 1e21, g: 2 ** 53 }, { a: "1", b: 2, c: 3, e: NaN, g: -0 }]);',
  'console.table([{ a: "12" }, { a: 3 }]); console.table({ " 1": 1, "0x1F": 2, "1e3": 3 });',
  // widths
  'console.table([{ name: "日本語", v: "é" }, { name: "😀x", v: "e\\u0301" }, { name: "🚀🤖", v: "ｈｅｌｌｏ" }]);',
  'console.table([["a", "b"], ["日本", "x"]]);',
  'console.table([{ zw: "a\\u200bb", comb: "e\\u0301e\\u0301", ctrl: "a\\tb", var: "❤\\ufe0f" }]);',
  'console.table({ "日本": 1, "key\\u200b": 2, "a\\nb": 3, "한국어": 4 });',
  'console.table([{ "\\u001b[31mred\\u001b[0m": 1, "\\u001b]8;;https://x\\u0007link\\u001b]8;;\\u0007": 2 }]);',
  // group indentation and output level
  'console.group("G"); console.table([{ a: 1 }]); console.group(); console.table([2]); console.groupEnd(); console.groupEnd(); console.table([3]);',
];

// Each case is followed by a marker line, so the outputs can be compared case by case.
const MARKER = '--- case end ---';
const SNIPPET = CASES.map((source) => `${source}\nconsole.log(${JSON.stringify(MARKER)});`).join('\n');

function byCase(output: string): { source: string; output: string }[] {
  const pieces = output.split(`${MARKER}\n`);
  expect(pieces).toHaveLength(CASES.length + 1);
  return CASES.map((source, i) => ({ source, output: pieces[i] ?? '' }));
}

let guest: Guest;
beforeAll(async () => { guest = await createGuest(); });
afterAll(() => { guest.dispose(); });

describe('console.table, compared with Deno 2', () => {
  it('prints the same text for every case', async () => {
    const [deno] = await Promise.all([runDeno(SNIPPET), evaluate(guest, SNIPPET)]);
    const ours = guest.logs.map((entry) => `${entry.text}\n`).join('');
    expect(byCase(ours)).toEqual(byCase(deno));
  });

  it('logs at the info level, one log op per table', async () => {
    guest.logs.length = 0;
    await evaluate(guest, 'console.table([{ a: 1 }]); console.table("x");');
    expect(guest.logs).toEqual([
      { level: 'info', text: '┌───────┬───┐\n│ (idx) │ a │\n├───────┼───┤\n│     0 │ 1 │\n└───────┴───┘' },
      { level: 'info', text: 'x' },
    ]);
  });
});
