import { BRIDGE_GLOBALS } from '../protocol.ts';

/**
 * A workload that walks the runtime's common paths (boot, a tool call that fetches JSON and text,
 * parses URLs, logs objects, reads env and files, sets a timer, sends an update; a throwing tool; an
 * exec snippet; a describe) against fake doors that answer every host operation from a microtask.
 *
 * V8 compiles functions lazily, per isolate: without this, every call's isolate compiled the fetch,
 * Headers, URL and console code it used anew (measured: a tool doing one fetch spent 4.2 ms of
 * isolate CPU, a trivial one 0.3 ms). Run where the snapshot is made (sandbox/host/prepared-isolate.ts),
 * in a throwaway context, it leaves no state in isolates made from the snapshot, only the compiled
 * code. Only trusted code runs; every promise settles through microtasks, which V8 runs before the
 * script's evaluation returns.
 *
 * Sets `globalThis.__paddock_warmup_done` to "ok" (or the first failure) once every step settled,
 * so a test can prove the workload really runs to the end.
 */
export const RUNTIME_WARMUP = `(() => {
  let nextId = 0;
  const body = (text) => new TextEncoder().encode(text);
  const answer = (op, args) => {
    switch (op) {
      case "fetch":
        return { ok: true, value: {
          status: 200, statusText: "OK", url: args.url, redirected: false,
          headers: [["content-type", "application/json; charset=utf-8"], ["x-request-id", "warm"], ["set-cookie", "a=b"]],
          body: body(args.url.includes("text") ? "plain text" : '{"items":[{"id":1,"name":"a"},{"id":2,"name":"b"}],"next":null}'),
        } };
      case "readFile": return { ok: true, value: body("line one\\nline two\\n") };
      case "readDir": return { ok: true, value: [{ name: "a.txt", isFile: true, isDirectory: false, isSymlink: false }] };
      case "stat": return { ok: true, value: { isFile: true, isDirectory: false, isSymlink: false, size: 18, mtime: 0, atime: 0, birthtime: 0, mode: 420 } };
      case "permissionsQuery": return { ok: true, value: { state: "granted", partial: false } };
      default: return { ok: true, value: null };
    }
  };
  globalThis.${BRIDGE_GLOBALS.request} = function (op, args) {
    const id = ++nextId;
    Promise.resolve().then(() => { globalThis.${BRIDGE_GLOBALS.settle}(id, answer(op, args)); });
    return id;
  };
  globalThis.${BRIDGE_GLOBALS.call} = function (op, args) {
    switch (op) {
      case "envGet": return { ok: true, value: "value" };
      case "envToObject": return { ok: true, value: { WARM: "1" } };
      case "cwd": return { ok: true, value: "/work" };
      case "randomBytes": return { ok: true, value: new Uint8Array(args.length) };
      default: return { ok: true, value: null };
    }
  };
  globalThis.${BRIDGE_GLOBALS.cancel} = function () {};
  __paddock_boot();
  const invoke = __paddock_invoke;

  const steps = [];
  globalThis.__paddock_module = { default: async function (params, ctx) {
    const url = new URL("https://api.example.com/v1/items?limit=5");
    url.searchParams.set("q", String(params.q));
    console.log("fetching", url.href, { params, list: [1, 2, 3], nested: { a: { b: null } } });
    const response = await fetch(url, { headers: { accept: "application/json", authorization: "Bearer x" }, signal: ctx.signal });
    if (!response.ok) throw new Error(response.statusText);
    const data = await response.json();
    for (const [name, value] of response.headers) void (name + value);
    const posted = await fetch(new Request("https://api.example.com/text", {
      method: "POST", body: JSON.stringify({ data }), headers: new Headers({ "content-type": "application/json" }),
    }));
    const text = await posted.text();
    const bytes = new TextEncoder().encode(text);
    new TextDecoder().decode(bytes);
    await (await fetch("https://api.example.com/text")).arrayBuffer();
    new Response("x", { status: 201, headers: { "x-a": "b" } }).headers.get("x-a");
    new URLSearchParams({ a: "1", b: "2" }).toString();
    console.info("info", new Map([["a", 1]]), new Set([1]), new Date(0));
    console.warn("warn", new Error("shown"));
    console.error("error %s %d %o", "a", 1, { a: 1 });
    Deno.env.get("WARM");
    Deno.env.toObject();
    Deno.cwd();
    await Deno.readTextFile("a.txt");
    await Deno.writeTextFile("b.txt", text);
    await Deno.stat("a.txt");
    for await (const entry of Deno.readDir(".")) void entry.name;
    await Deno.permissions.query({ name: "net", host: "api.example.com" });
    crypto.randomUUID();
    crypto.getRandomValues(new Uint8Array(8));
    btoa(atob("d2FybQ=="));
    structuredClone({ a: [1, { b: 2 }], d: new Date(0) });
    await new Promise((resolve) => setTimeout(resolve, 1));
    clearTimeout(setTimeout(() => {}, 1000));
    const controller = new AbortController();
    controller.signal.addEventListener("abort", () => {});
    controller.abort();
    await ctx.update("halfway");
    return { content: JSON.stringify({ count: data.items.length, bytes: bytes.length }), metadata: { source: url.hostname } };
  } };
  steps.push(invoke({ kind: "tool", params: { q: "warm" }, callId: "warmup", sessionId: null }));
  globalThis.__paddock_module = { default: function () { return "warm"; } };
  steps.push(invoke({ kind: "tool", params: {}, callId: "warmup-2", sessionId: null }));
  globalThis.__paddock_module = { default: async function () { throw new TypeError("warm failure"); } };
  steps.push(invoke({ kind: "tool", params: {}, callId: "warmup-3", sessionId: null }));
  globalThis.__paddock_module = { default: async function () { return { warm: [1, 2, 3] }; } };
  steps.push(invoke({ kind: "exec" }));
  globalThis.__paddock_module = { name: "warm", description: "d", parameters: { type: "object" }, permissions: {}, default() {} };
  steps.push(invoke({ kind: "describe" }));
  Promise.all(steps).then((outputs) => {
    const first = outputs[0];
    globalThis.__paddock_warmup_done = first && typeof first.content === "string" && first.content.includes('"count":2')
      ? "ok"
      : "the warm-up tool answered " + JSON.stringify(first);
  }, (error) => { globalThis.__paddock_warmup_done = "failed: " + String(error); });
})();
`;
