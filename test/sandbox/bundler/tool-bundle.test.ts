/**
 * Pins: a tool module and its relative imports become one isolate script; imports never reach
 * outside the tools folder (no `../`, no symlink, no remote or npm specifier); compile errors name
 * file:line:column.
 */
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleSnippet, bundleToolModule } from '../../../sandbox/bundler/tool-bundle.ts';

let base: string;
let tools: string;

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'paddock-bundle-'));
  tools = path.join(base, 'tools');
  await mkdir(path.join(tools, 'lib'), { recursive: true });
  await writeFile(path.join(base, 'secret.ts'), 'export const secret = "host-secret";\n');
  await writeFile(path.join(tools, 'lib', 'math.ts'), 'export const double = (n: number): number => n * 2;\n');
  await writeFile(path.join(tools, 'ok.ts'), [
    'import { double } from "./lib/math.ts";',
    'export const name = "ok";',
    'export default async function execute(params: { n: number }): Promise<string> { return String(double(params.n)); }',
  ].join('\n'));
  await writeFile(path.join(tools, 'broken.ts'), 'export const name = "broken";\nexport default function (: string {}\n');
  await writeFile(path.join(tools, 'escape.ts'), 'import { secret } from "../secret.ts";\nexport default () => secret;\n');
  await symlink(path.join(base, 'secret.ts'), path.join(tools, 'lib', 'link.ts'));
  await writeFile(path.join(tools, 'via-link.ts'), 'import { secret } from "./lib/link.ts";\nexport default () => secret;\n');
  await writeFile(path.join(tools, 'npm.ts'), 'import _ from "npm:lodash";\nexport default () => _;\n');
  await writeFile(path.join(tools, 'bare.ts'), 'import fs from "fs";\nexport default () => fs;\n');
});
afterAll(async () => { await rm(base, { recursive: true, force: true }); });

/** Runs a bundle in a plain V8 context (no host objects) and returns its module namespace. */
function evaluate(code: string): Record<string, unknown> {
  const context = vm.createContext({});
  vm.runInContext(code, context);
  return vm.runInContext('__paddock_module', context) as Record<string, unknown>;
}

describe('bundleToolModule', () => {
  it('bundles relative imports and strips types', async () => {
    const bundle = await bundleToolModule(path.join(tools, 'ok.ts'), tools);
    const module = evaluate(bundle.code);
    expect(module['name']).toBe('ok');
    expect(await (module['default'] as (p: unknown) => Promise<string>)({ n: 21 })).toBe('42');
    expect(bundle.filename).toBe('ok.ts');
    expect(bundle.inputs.map((input) => path.basename(input)).sort()).toEqual(['math.ts', 'ok.ts']);
    expect(bundle.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reports a syntax error with file:line:column', async () => {
    await expect(bundleToolModule(path.join(tools, 'broken.ts'), tools)).rejects.toMatchObject({
      kind: 'compile_error',
      message: expect.stringMatching(/^broken\.ts:2:26: /),
    });
  });

  it.each([
    ['escape.ts', 'resolves outside the tools folder'],
    ['via-link.ts', 'resolves outside the tools folder'],
    ['npm.ts', '"npm:lodash" is not supported'],
    ['bare.ts', '"fs" is a bare specifier'],
  ])('refuses %s', async (file, reason) => {
    const attempt = bundleToolModule(path.join(tools, file), tools);
    await expect(attempt).rejects.toMatchObject({ kind: 'compile_error', message: expect.stringContaining(reason) });
    await expect(attempt).rejects.not.toMatchObject({ message: expect.stringContaining('host-secret') });
  });
});

describe('bundleSnippet', () => {
  it('runs the snippet as an async function body', async () => {
    const bundle = await bundleSnippet('const x: number = await Promise.resolve(20);\nreturn x + 22;', 'ts');
    const module = evaluate(bundle.code);
    expect(await (module['default'] as () => Promise<number>)()).toBe(42);
  });

  it('reports errors at the caller\'s own line numbers', async () => {
    await expect(bundleSnippet('const a = 1;\nconst = 2;', 'js')).rejects.toMatchObject({
      kind: 'compile_error',
      message: expect.stringMatching(/^snippet\.js:2:7: /),
    });
  });
});
