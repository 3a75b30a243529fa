/**
 * Pins: the invoke contract with the host. A tool call resolves to a GuestToolResult (or to
 * `{ error: { name, message } }`, never a rejection); exec resolves to `{ result }` as JSON-safe
 * data; abort ends the call with an AbortError and cancels what is in flight; host denials are
 * rebuilt as Deno.errors classes with Deno's exact message.
 */
import { build } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuest, HostFailure, type Guest, type GuestOptions } from './helpers/fake-host.ts';

let guest: Guest | undefined;
afterEach(() => { guest?.dispose(); guest = undefined; });

async function start(options: GuestOptions = {}): Promise<Guest> {
  guest = await createGuest(options);
  return guest;
}

/** A user bundle as esbuild emits it with globalName '__paddock_module'. */
function toolBundle(body: string): string {
  return `var __paddock_module = (() => {
    const name = "t"; const description = "d"; const parameters = { type: "object" }; const permissions = {};
    async function execute(params, ctx) { ${body} }
    return { name, description, parameters, permissions, default: execute };
  })();`;
}

const call = { kind: 'tool', params: { city: 'Oslo' }, callId: 'call-1', sessionId: 's-1' };

describe('tool invocation', () => {
  it('turns a string into a plain result', async () => {
    const g = await start();
    expect(await g.invoke(toolBundle('return "weather in " + params.city;'), call)).toEqual({
      content: 'weather in Oslo', isError: false, metadata: null, terminate: false,
    });
  });

  it('normalizes a ToolResult object and copies its metadata as data', async () => {
    const g = await start();
    const result = await g.invoke(toolBundle('return { content: "c", isError: true, metadata: { at: new Date(0), n: 1, drop: undefined }, terminate: true, extra: 1 };'), call);
    expect(result).toEqual({ content: 'c', isError: true, metadata: { at: '1970-01-01T00:00:00.000Z', n: 1 }, terminate: true });
  });

  it('rejects a result whose content is not a string, with a clear message', async () => {
    const g = await start();
    expect(await g.invoke(toolBundle('return { content: 42 };'), call)).toEqual({
      error: { name: 'TypeError', message: "The tool result's content must be a string; it was number." },
    });
    expect(await g.invoke(toolBundle('return [1];'), call)).toEqual({
      error: { name: 'TypeError', message: 'A tool must return a string or { content, isError?, metadata?, terminate? }; it returned an array.' },
    });
  });

  it('gives ctx the call identity, an AbortSignal and update()', async () => {
    const updates: string[] = [];
    const g = await start({ async: { update: ({ text }) => { updates.push(text); return null; } } });
    const result = await g.invoke(toolBundle(`
      await ctx.update("half way");
      return JSON.stringify([ctx.callId, ctx.sessionId, ctx.signal instanceof AbortSignal, ctx.signal.aborted, Object.isFrozen(ctx)]);`), call);
    expect(result).toMatchObject({ content: '["call-1","s-1",true,false,true]' });
    expect(updates).toEqual(['half way']);
  });

  it('resolves a thrown error to { error: { name, message } } with the class name', async () => {
    const g = await start();
    expect(await g.invoke(toolBundle('throw new RangeError("too far");'), call)).toEqual({ error: { name: 'RangeError', message: 'too far' } });
    expect(await g.invoke(toolBundle('throw "a string";'), call)).toEqual({ error: { name: 'Error', message: 'a string' } });
  });

  it('rebuilds a host denial as Deno.errors.NotCapable with the exact message', async () => {
    const denial = 'Requires net access to "example.com:443", run again with the --allow-net flag';
    const g = await start({ async: { fetch: () => { throw new HostFailure('NotCapable', denial); } } });
    const result = await g.invoke(toolBundle(`
      try { await fetch("https://example.com/"); } catch (e) {
        return JSON.stringify([e instanceof Deno.errors.NotCapable, e instanceof Error, e.name, e.message, e.stack.includes("/work/")]);
      }`), call);
    expect(result).toMatchObject({ content: JSON.stringify([true, true, 'NotCapable', denial, false]) });
    expect(await g.invoke(toolBundle('await fetch("https://example.com/");'), call)).toEqual({ error: { name: 'NotCapable', message: denial } });
  });

  it('reports a module without a default function', async () => {
    const g = await start();
    expect(await g.invoke('var __paddock_module = { name: "x" };', call)).toEqual({
      error: { name: 'TypeError', message: 'The tool module has no default export function.' },
    });
  });
});

describe('a module bundled as the host bundles it', () => {
  it('runs an esbuild IIFE with globalName __paddock_module', async () => {
    const source = `
      export const name = "weather";
      export const description = "Current weather.";
      export const parameters = { type: "object", properties: { city: { type: "string" } } };
      export const permissions = { net: ["api.example"] };
      interface Params { city: string }
      export default async function execute(params: Params, ctx: { callId: string; update(text: string): Promise<void> }): Promise<string> {
        await ctx.update("looking up " + params.city);
        const response = await fetch(\`https://api.example/\${encodeURIComponent(params.city)}\`);
        return \`\${params.city}: \${await response.text()} (\${ctx.callId})\`;
      }`;
    const bundled = await build({
      stdin: { contents: source, loader: 'ts', sourcefile: 'weather.ts' }, bundle: true, write: false, format: 'iife',
      globalName: '__paddock_module', platform: 'neutral', target: 'es2024',
    });
    const g = await start({
      async: {
        fetch: (args) => ({ status: 200, statusText: 'OK', headers: [], url: args.url, redirected: false, body: new TextEncoder().encode('sunny') }),
        update: () => null,
      },
    });
    expect(await g.invoke(bundled.outputFiles[0]!.text, { kind: 'tool', params: { city: 'São Paulo' }, callId: 'c-9', sessionId: null }))
      .toEqual({ content: 'São Paulo: sunny (c-9)', isError: false, metadata: null, terminate: false });
    expect(g.requests.map((request) => request.op)).toEqual(['update', 'fetch']);
    expect(g.requests[1]?.args).toMatchObject({ url: 'https://api.example/S%C3%A3o%20Paulo' });
  });
});

describe('exec invocation', () => {
  it('awaits a default function and returns its value as data', async () => {
    const g = await start();
    expect(await g.invoke('var __paddock_module = { default: async () => ({ a: [1, "b"], d: new Date(0), u: undefined }) };', { kind: 'exec' }))
      .toEqual({ result: { a: [1, 'b'], d: '1970-01-01T00:00:00.000Z' } });
  });

  it('awaits a default value that is not a function; undefined becomes null', async () => {
    const g = await start();
    expect(await g.invoke('var __paddock_module = { default: Promise.resolve(7) };', { kind: 'exec' })).toEqual({ result: 7 });
    expect(await g.invoke('var __paddock_module = { default: undefined };', { kind: 'exec' })).toEqual({ result: null });
  });

  it('resolves errors, including values JSON cannot carry', async () => {
    const g = await start();
    expect(await g.invoke('var __paddock_module = { default: () => { throw new Deno.errors.NotFound("nope"); } };', { kind: 'exec' }))
      .toEqual({ error: { name: 'NotFound', message: 'nope' } });
    expect(await g.invoke('var __paddock_module = { default: () => 1n };', { kind: 'exec' }))
      .toEqual({ error: { name: 'TypeError', message: 'Do not know how to serialize a BigInt' } });
  });

  it('ends the call with an error thrown by a timer callback', async () => {
    const g = await start();
    const result = await g.invoke('var __paddock_module = { default: () => new Promise(() => { setTimeout(() => { throw new Error("late"); }, 1); }) };', { kind: 'exec' });
    expect(result).toEqual({ error: { name: 'Error', message: 'late' } });
  });

  it('rejects an unknown kind as a result, not a rejection', async () => {
    const g = await start();
    expect(await g.invoke('var __paddock_module = {};', { kind: 'nope' })).toEqual({ error: { name: 'TypeError', message: 'Unknown invocation kind: [object String].' } });
  });
});

describe('abort', () => {
  it('aborts ctx.signal, cancels in-flight requests and timers, and ends the call with an AbortError', async () => {
    let started!: () => void;
    const fetching = new Promise<void>((resolve) => { started = resolve; });
    const g = await start({ async: { fetch: () => { started(); return new Promise(() => { /* never answers */ }); } } });
    const pending = g.invoke(toolBundle(`
      ctx.signal.addEventListener("abort", () => console.log("signal:", ctx.signal.reason.name, ctx.signal.reason.message));
      setTimeout(() => console.log("timer fired"), 50);
      await fetch("https://slow.example/");
      return "unreachable";`), call);
    await fetching;
    await g.abort('The caller cancelled the call.');
    expect(await pending).toEqual({ error: { name: 'AbortError', message: 'The caller cancelled the call.' } });
    expect(g.cancelled.length).toBe(2); // the fetch and the timer's sleep
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(g.logs.map((entry) => entry.text)).toEqual(['signal: AbortError The caller cancelled the call.']);
  });
});
