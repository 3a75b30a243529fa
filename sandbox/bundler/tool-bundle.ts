import { createHash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { build, transform } from 'esbuild';
import type { Message, Plugin } from 'esbuild';
import { CallError } from '../errors.ts';

/** One isolate script: an IIFE that assigns the module namespace to `globalThis.__paddock_module`. */
export interface Bundle {
  code: string;
  /** SHA-256 of `code`: the code-cache key and the version id. */
  hash: string;
  /** The entry file, relative to the tools folder (shown in guest stack traces). */
  filename: string;
  /** Every file that went into the bundle (absolute real paths), for the reload watcher. */
  inputs: string[];
}

export const MODULE_GLOBAL = '__paddock_module';
const TARGET = 'es2023';

/**
 * Bundles a tool module and its relative imports into one isolate script. Imports may not leave
 * `root` (the tools folder): a module could otherwise pull any host file into its own isolate.
 * Remote (`https:`), `npm:`, `jsr:` and bare specifiers are refused with the reason.
 */
export async function bundleToolModule(entry: string, root: string): Promise<Bundle> {
  const realRoot = await realpath(root);
  const realEntry = await realpath(entry).catch(() => {
    throw new CallError('compile_error', `${path.relative(root, entry) || entry}: no such file`);
  });
  if (!isInside(realRoot, realEntry)) throw new CallError('compile_error', `${entry}: the module is outside the tools folder`);

  const result = await build({
    entryPoints: [realEntry],
    bundle: true,
    write: false,
    format: 'iife',
    globalName: MODULE_GLOBAL,
    platform: 'neutral',
    target: TARGET,
    charset: 'utf8',
    logLevel: 'silent',
    metafile: true,
    absWorkingDir: realRoot,
    plugins: [confineImports(realRoot)],
  }).catch((error: unknown) => {
    throw compileError(error, realRoot);
  });
  const code = result.outputFiles[0]?.text ?? '';
  return {
    code,
    hash: sha256(code),
    filename: path.relative(realRoot, realEntry),
    inputs: Object.keys(result.metafile.inputs).map((input) => path.resolve(realRoot, input)),
  };
}

/**
 * A code_exec snippet: the body of an async function (so `await` and `return` work at top level);
 * the returned value is the result.
 */
export async function bundleSnippet(code: string, language: 'ts' | 'js'): Promise<Bundle> {
  const wrapped = `export default async function snippet() {\n${code}\n}\n`;
  const result = await transform(wrapped, {
    loader: language,
    format: 'iife',
    globalName: MODULE_GLOBAL,
    target: TARGET,
    sourcefile: `snippet.${language}`,
    logLevel: 'silent',
  }).catch((error: unknown) => {
    // The wrapper adds one line before the snippet: report positions in the caller's own lines.
    throw compileError(error, '', -1);
  });
  return { code: result.code, hash: sha256(result.code), filename: `snippet.${language}`, inputs: [] };
}

function confineImports(root: string): Plugin {
  return {
    name: 'paddock-confine-imports',
    setup(builder) {
      builder.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point') return undefined;
        const specifier = args.path;
        if (/^(https?|npm|jsr|node|data|file):/i.test(specifier)) {
          return { errors: [{ text: `"${specifier}" is not supported: only relative imports inside the tools folder are bundled` }] };
        }
        if (!specifier.startsWith('./') && !specifier.startsWith('../')) {
          return { errors: [{ text: `"${specifier}" is a bare specifier: only relative imports inside the tools folder are bundled` }] };
        }
        const resolved = path.resolve(args.resolveDir, specifier);
        const real = await realpath(resolved).catch(() => undefined);
        if (real === undefined) return { errors: [{ text: `cannot find "${specifier}"` }] };
        if (!isInside(root, real)) return { errors: [{ text: `"${specifier}" resolves outside the tools folder` }] };
        return { path: real };
      });
    },
  };
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** esbuild's messages as `file:line:column: text`, paths relative to the tools folder. */
function compileError(error: unknown, root: string, lineOffset = 0): CallError {
  const messages = (error as { errors?: Message[] }).errors ?? [];
  if (messages.length === 0) return new CallError('compile_error', 'The module could not be compiled.');
  const lines = messages.slice(0, 10).map((message) => {
    const location = message.location;
    if (location === null) return message.text;
    const file = root === '' ? location.file : path.relative(root, path.resolve(root, location.file));
    return `${file}:${location.line + lineOffset}:${location.column + 1}: ${message.text}`;
  });
  return new CallError('compile_error', lines.join('\n'), { errors: lines });
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
