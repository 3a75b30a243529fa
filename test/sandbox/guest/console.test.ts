/**
 * Pins: console output inside the isolate is formatted as Deno 2 formats it (nested objects,
 * depth cut-off, line breaking, number grouping, %-formats, quoting), and each call reaches the
 * host as one `log` op with the right level.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDeno } from './helpers/deno.ts';
import { createGuest, evaluate, type Guest } from './helpers/fake-host.ts';

let guest: Guest;
beforeAll(async () => { guest = await createGuest(); });
afterAll(() => { guest.dispose(); });

const SNIPPET = `
console.log({ a: "x", b: 1, c: [1, 2, 3], d: { e: { f: { g: { h: 1 } } } }, n: null, u: undefined, s: Symbol("q"), big: 10n, fn() {}, arrow: () => 1, cls: class Foo {} });
console.log([1, "a", [2, [3, [4, [5, [6]]]]]]);
console.log({ longlonglonglongkey1: "aaaaaaaaaaaaaaaaaaaa", longlonglonglongkey2: "bbbbbbbbbbbbbbbbbbbbbbbb", k3: 3 });
console.log("%s is %d years and %i, %f, %o %O %%", "Bob", 42.5, 42.5, "1.5", { a: 1 }, { b: 2 }, "extra", { x: 1 });
console.log("%c styled", "color: red");
console.log("100%", 5, "%d");
console.log(new Map([[1, { a: 1 }], ["k", "v"]]), new Set([1, "two"]), new Map(), new Set());
console.log([undefined, null, -0, NaN, Infinity, 1e21, 0.1]);
console.log(new Date(0), /re/g, new Uint8Array([1, 2, 3]), new ArrayBuffer(3));
const c = { name: "c" }; c.self = c; console.log(c);
console.log(["a", "b"], { "key with space": 1, valid_id: 2, 3: 4, "$x": 5 });
console.log(Array.from({ length: 30 }, (_, i) => i));
console.log(Array.from({ length: 120 }, (_, i) => i));
console.log(Array.from({ length: 10 }, (_, i) => "item" + i));
console.log({ s: "it's \\"quoted\\"\\n" }, "top-level string", ["it's"], ['say "hi"']);
console.log([ , 1, , 2], new Array(5));
class P { constructor() { this.x = 1; } } console.log(new P(), Object.create(null), [new P()]);
console.log(new WeakMap(), new WeakSet());
console.log(Symbol.iterator, 1.5, -0, true, 12n);
console.log([{ a: 1, b: 2 }, { a: 3, b: 4 }]);
console.log({ a: [{ b: { c: {} } }] });
console.log({ f: function named() {}, g: async function () {}, h: function* gen() {}, i: async () => {} });
console.log("a\\nb", ["a\\nb"], ["tab\\there"]);
console.log({ get g() { return 1; }, set s(v) {}, get gs() { return 1; }, set gs(v) {} });
console.log([[1, [2, [3]]], { x: { y: { z: { w: { v: 1 } } } } }]);
console.log(Object.assign([1, 2], { extra: true }));
console.log({ [Symbol("k")]: 1, regular: 2 });
console.log(new Number(3), new String("s"), new Boolean(false));
console.log("a".repeat(100));
console.log({ text: "b".repeat(90) });
console.log(new Uint8Array(200));
console.log({ nested: new Map([["a", [1, 2, { deep: { deeper: { deepest: 1 } } }]]]) });
console.log(new URL("https://a.b/c?d#e"), new URLSearchParams("a=1&b=2"), new URLSearchParams(""));
console.log("%s|%s|%s|%s", null, undefined, 1n, Symbol("s"), "rest");
console.log("%d|%i|%f", "42abc", 3.9, "x");
console.log(["apple", "banana", "cherry", "date", "elderberry", "fig", "grape", "honeydew"]);
console.log({ arr: Array.from({ length: 8 }, (_, i) => ({ id: i })) });
console.log(new Float64Array([1.5, -0, NaN]), new BigInt64Array([1n, -2n]));
console.log(new (class Foo extends Map {})([[1, 2]]), new (class Bar extends Array {})(1, 2));
console.log(Object.defineProperty({}, Symbol.toStringTag, { value: "Tagged" }));
const shared = { s: 1 }; console.log([shared, shared], new Array(3).fill({ same: true }));
console.log(new Response("x"));
console.log(new AbortController(), AbortSignal.abort("r"), new Event("x"));
console.log(new TextEncoder(), new TextDecoder());
console.log(new TextDecoder("latin1"), new TextDecoder("UTF-16BE", { fatal: true }));
console.log("a%%b"); console.log("%s and %d"); console.log("a%%b", 1);
console.log(["\\"'\${x}", "\\"'\`"], Symbol("a b"), Symbol(""), Symbol(), Symbol("a.b"), { [Symbol("k l")]: Symbol("v w") }, Object(Symbol("x y")));
console.log("%s|%o", Symbol("a b"), Symbol("c d"));
`;

describe('console formatting, compared with Deno 2', () => {
  it('prints the same text for a battery of values', async () => {
    const local = await createGuest();
    try {
      await evaluate(local, SNIPPET);
      const ours = local.logs.map((entry) => entry.text).join('\n') + '\n';
      const deno = await runDeno(SNIPPET);
      expect(ours).toBe(deno);
    } finally {
      local.dispose();
    }
  });
});

describe('console levels and helpers', () => {
  it('sends each method at its level', async () => {
    guest.logs.length = 0;
    await evaluate(guest, `console.log('l'); console.info('i'); console.debug('d'); console.warn('w'); console.error('e');
      console.assert(1 === 2, 'math', 1); console.assert(true, 'never'); console.count(); console.count(); console.count('x');
      console.group('G'); console.log('inside\\nlines'); console.groupEnd(); console.log('outside'); console.dir({ a: 1 });`);
    expect(guest.logs).toEqual([
      { level: 'info', text: 'l' }, { level: 'info', text: 'i' }, { level: 'debug', text: 'd' }, { level: 'warn', text: 'w' },
      { level: 'error', text: 'e' }, { level: 'error', text: 'Assertion failed: math 1' }, { level: 'info', text: 'default: 1' },
      { level: 'info', text: 'default: 2' }, { level: 'info', text: 'x: 1' }, { level: 'info', text: 'G' },
      { level: 'info', text: '  inside\n  lines' }, { level: 'info', text: 'outside' }, { level: 'info', text: '{ a: 1 }' },
    ]);
  });

  it('prints errors with their name, message and a guest-side stack', async () => {
    guest.logs.length = 0;
    await evaluate(guest, `console.error(new TypeError('bad thing')); console.log({ err: new Deno.errors.NotFound('gone') });`);
    const [first, second] = guest.logs;
    expect(first?.text).toMatch(/^TypeError: bad thing\n {4}at /);
    expect(second?.text).toMatch(/^\{\n {2}err: NotFound: gone\n {6}at /);
    expect(guest.logs.map((entry) => entry.text).join('\n')).not.toMatch(/\/work\/|node_modules/);
  });

  it('shows Web API objects through their custom inspect', async () => {
    guest.logs.length = 0;
    await evaluate(guest, `console.log(new Headers({ b: '2', a: '1' })); console.log(new URLSearchParams('a=1').size, Deno.inspect({ a: [1, { b: 2 }] }));`);
    expect(guest.logs.map((entry) => entry.text)).toEqual(['Headers { a: "1", b: "2" }', '1 { a: [ 1, { b: 2 } ] }']);
  });
});
