/**
 * tools/_template.ts: the canonical Paddock tool module (SPEC §2).
 *
 * Files whose names start with "_" are not loaded. Copy this file to tools/<name>.ts (or send it
 * through write_tool), change the four declarations and execute, and it is live on save.
 *
 * A tool module is a plain Deno-compatible ES module:
 * - It runs in its own isolate, with Web-standard APIs (fetch, URL, TextEncoder, crypto.randomUUID,
 *   AbortController, setTimeout, console, Intl, ...) and a subset of Deno (Deno.readTextFile,
 *   Deno.writeTextFile, Deno.readDir, Deno.stat, Deno.mkdir, Deno.remove, Deno.env.get,
 *   Deno.cwd, Deno.permissions.query, Deno.errors).
 * - There is no Node (require, process, Buffer), no npm: or jsr: or https: imports, no
 *   WebAssembly, no sub-processes. Relative imports (./helpers.ts) inside the tools folder are
 *   bundled with the tool; files they import should start with "_" so they are not loaded as tools.
 * - Every capability (network, files, environment) must be declared in `permissions`. A call is
 *   granted what it declares ∩ what the caller's policy allows ∩ what the request narrows it to;
 *   anything else throws Deno.errors.NotCapable with Deno's own message.
 * - The same file runs under real Deno 2 with the same result:
 *     npm run deno-run -- tools/<name>.ts --params '{"text":"hi"}'
 *     npx paddock run tools/<name>.ts --params '{"text":"hi"}'
 *     npx paddock check tools/<name>.ts        (what the loader checks, without running execute)
 */

// The tool's name: ^[a-z][a-z0-9_]{0,63}$, unique among all tools, never a built-in's name.
export const name = "template_echo";

// What the model reads to decide when to call it: say what it does and when to use it.
export const description =
  "Repeats a text a number of times, optionally in upper case. Use it as a starting point for a new tool.";

// JSON Schema (draft 2020-12) of the params; "type": "object" is required. Paddock validates every
// call against it before execute runs, so execute can trust the shape.
export const parameters = {
  type: "object",
  properties: {
    text: { type: "string", minLength: 1, description: "The text to repeat." },
    times: { type: "integer", minimum: 1, maximum: 10, description: "How many times. Default: 1." },
    uppercase: { type: "boolean", description: "Upper-case the result. Default: false." },
  },
  required: ["text"],
  additionalProperties: false,
};

// What the tool may touch, in Deno's flag vocabulary. Declare as little as possible:
//   net:   ["api.example.com", "example.org:8443", "203.0.113.7"]   hosts, host:port, IPs
//   read:  ["./data", "/srv/shared/file.txt"]                       paths (relative = the call's working directory)
//   write: ["./out"]
//   env:   ["EXAMPLE_API_KEY"]                                      names of the operator's configured secrets
// `true` means "all" and is rarely granted by a policy. Loopback and private addresses are refused
// unless the literal address is declared and granted.
export const permissions = {};

/** What execute receives besides params. */
interface ToolContext {
  /** Aborted when the caller cancels or the call runs out of time; pass it to fetch. */
  signal: AbortSignal;
  /** Streams a partial result (an SSE `update` event, an MCP progress notification). */
  update(text: string): void | Promise<void>;
  callId: string;
  sessionId: string | null;
}

/** Return a string, or this. A thrown error becomes an error result with its message. */
interface ToolResult {
  content: string;
  /** The call failed in a way the model should see and act on. */
  isError?: boolean;
  /** JSON data for programs (HTTP clients); the model sees `content`. */
  metadata?: Record<string, unknown>;
  /** Ask the agent loop to stop after this step. */
  terminate?: boolean;
}

interface Params {
  text: string;
  times?: number;
  uppercase?: boolean;
}

export default async function execute(params: Params, ctx: ToolContext): Promise<string | ToolResult> {
  const times = params.times ?? 1;
  const parts: string[] = [];
  for (let index = 0; index < times; index++) {
    // Long work checks the signal, so a cancelled call stops early.
    ctx.signal.throwIfAborted();
    parts.push(params.uppercase === true ? params.text.toUpperCase() : params.text);
    if (times > 1) await ctx.update(`${index + 1}/${times}`);
  }
  const content = parts.join(" ");
  if (content.length > 10_000) {
    // A failure the model can act on: say what to do next.
    return { content: "The result would be over 10000 characters; use a shorter text or fewer times.", isError: true };
  }
  return { content, metadata: { times, length: content.length } };
}
