/**
 * Pins: imports point down only (STYLE §1). sandbox/** never imports runtime/**; sandbox/guest/**
 * (code that runs inside the isolate) imports only sandbox/guest/** and sandbox/protocol.ts, and
 * protocol.ts imports nothing, so what the guest bundle takes from it (message types, host-function
 * names, limits) cannot drag host code in; only runtime/http/** imports `hono` or `@hono/*`. Every .ts file under
 * sandbox/ and runtime/ is parsed with the TypeScript parser, so static, dynamic, re-export,
 * `import x = require()` and `import('...')` type specifiers all count. A self-check feeds the
 * checker bad files, so this test cannot pass by finding nothing.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface ImportRef {
  readonly specifier: string;
  /** True when the import can only bring in types (erased before run time). */
  readonly typeOnly: boolean;
}

interface SourceFile {
  /** Repository-relative, with forward slashes, e.g. `sandbox/guest/entry.ts`. */
  readonly file: string;
  readonly text: string;
}

/** Every module specifier in a file, with whether it is type-only. */
function importsOf(file: string, text: string): ImportRef[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: ImportRef[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      // Only `import type` is erased whole: under verbatimModuleSyntax, `import { type A }` stays as `import {}`.
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.importClause?.phaseModifier === ts.SyntaxKind.TypeKeyword });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)
      && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push({ specifier: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node)) {
      const [argument] = node.arguments;
      const isDynamicImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if ((isDynamicImport || isRequire) && argument !== undefined) {
        // A computed specifier cannot be checked, so it is reported as such rather than trusted.
        found.push({ specifier: ts.isStringLiteralLike(argument) ? argument.text : '<computed>', typeOnly: false });
      }
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Where a specifier points: a repository-relative path for relative ones, else the bare package name. */
function target(file: string, specifier: string): { kind: 'file'; path: string } | { kind: 'package'; name: string } {
  if (specifier.startsWith('.') || specifier.startsWith('/')) {
    const resolved = path.posix.normalize(specifier.startsWith('/') ? path.posix.relative(ROOT, specifier) : path.posix.join(path.posix.dirname(file), specifier));
    return { kind: 'file', path: resolved };
  }
  return { kind: 'package', name: specifier };
}

const inside = (file: string, folder: string): boolean => file === folder || file.startsWith(`${folder}/`);

/** One line per import that breaks a rule; empty when the files respect the architecture. */
function checkBoundaries(files: readonly SourceFile[]): string[] {
  const violations: string[] = [];
  for (const { file, text } of files) {
    for (const { specifier, typeOnly } of importsOf(file, text)) {
      const to = target(file, specifier);
      const where = `${file} imports "${specifier}"`;
      if (to.kind === 'file' && inside(file, 'sandbox') && inside(to.path, 'runtime')) {
        violations.push(`${where}: sandbox/ must not import runtime/`);
      }
      const toProtocol = to.kind === 'file' && to.path === 'sandbox/protocol.ts';
      if (inside(file, 'sandbox/guest') && !toProtocol && (to.kind === 'package' || !inside(to.path, 'sandbox/guest'))) {
        violations.push(`${where}: guest code may import only sandbox/guest/** and sandbox/protocol.ts`);
      }
      if (file === 'sandbox/protocol.ts' && !typeOnly) {
        violations.push(`${where}: sandbox/protocol.ts is shared with guest code and must import nothing`);
      }
      if (to.kind === 'package' && /^(hono|@hono\/[^/]+)(\/|$)/.test(to.name) && !inside(file, 'runtime/http')) {
        violations.push(`${where}: only runtime/http/** may import hono`);
      }
      if (specifier === '<computed>') violations.push(`${where}: a computed import cannot be checked; use a string literal`);
    }
  }
  return violations;
}

async function tsFilesUnder(folder: string): Promise<SourceFile[]> {
  const entries = await readdir(path.join(ROOT, folder), { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(path.join(ROOT, file), 'utf8') })));
}

describe('import boundaries', () => {
  it('hold for every .ts file under sandbox/ and runtime/', async () => {
    const files = [...(await tsFilesUnder('sandbox')), ...(await tsFilesUnder('runtime'))];
    expect(files.map((entry) => entry.file)).toEqual(expect.arrayContaining(['runtime/service.ts', 'runtime/http/app.ts', 'sandbox/protocol.ts']));
    const imports = files.flatMap(({ file, text }) => importsOf(file, text));
    expect(imports.length).toBeGreaterThan(files.length); // the walk really read imports
    expect(checkBoundaries(files)).toEqual([]);
  });
});

describe('the checker itself', () => {
  it('reports every kind of violation, from every kind of import', () => {
    const files: SourceFile[] = [
      { file: 'sandbox/host/run.ts', text: "import { loadConfig } from '../../runtime/config/load.ts';" },
      { file: 'sandbox/workers/main.ts', text: "const m = await import('../../runtime/service.ts');" },
      { file: 'sandbox/index.ts', text: "export { thing } from '../runtime/thing.ts';" },
      { file: 'sandbox/guest/deno.ts', text: "import { readFile } from 'node:fs';" },
      { file: 'sandbox/protocol.ts', text: "import { CallError } from './errors.ts';\nimport type { Grant } from './grants/grant.ts';" },
      { file: 'sandbox/guest/web/fetch.ts', text: "import type { Grant } from '../../grants/grant.ts';" },
      { file: 'sandbox/guest/bridge.ts', text: "type Limits = import('../limits.ts').CallLimits;" },
      { file: 'runtime/service.ts', text: "import { serve } from '@hono/node-server';" },
      { file: 'runtime/coordinator/invoke-tool.ts', text: "import type { Context } from 'hono';" },
      { file: 'runtime/cli/main.ts', text: "import { createMiddleware } from 'hono/factory';" },
      { file: 'runtime/registry/load.ts', text: "const name = 'x'; await import(name);" },
      { file: 'runtime/legacy.ts', text: "import hono = require('hono');" },
    ];
    expect(checkBoundaries(files)).toEqual([
      'sandbox/host/run.ts imports "../../runtime/config/load.ts": sandbox/ must not import runtime/',
      'sandbox/workers/main.ts imports "../../runtime/service.ts": sandbox/ must not import runtime/',
      'sandbox/index.ts imports "../runtime/thing.ts": sandbox/ must not import runtime/',
      'sandbox/guest/deno.ts imports "node:fs": guest code may import only sandbox/guest/** and sandbox/protocol.ts',
      'sandbox/protocol.ts imports "./errors.ts": sandbox/protocol.ts is shared with guest code and must import nothing',
      'sandbox/guest/web/fetch.ts imports "../../grants/grant.ts": guest code may import only sandbox/guest/** and sandbox/protocol.ts',
      'sandbox/guest/bridge.ts imports "../limits.ts": guest code may import only sandbox/guest/** and sandbox/protocol.ts',
      'runtime/service.ts imports "@hono/node-server": only runtime/http/** may import hono',
      'runtime/coordinator/invoke-tool.ts imports "hono": only runtime/http/** may import hono',
      'runtime/cli/main.ts imports "hono/factory": only runtime/http/** may import hono',
      'runtime/registry/load.ts imports "<computed>": a computed import cannot be checked; use a string literal',
      'runtime/legacy.ts imports "hono": only runtime/http/** may import hono',
    ]);
  });

  it('accepts what the rules allow', () => {
    const files: SourceFile[] = [
      { file: 'sandbox/guest/entry.ts', text: "import type { HostOp } from '../protocol.ts';\nimport { callHost } from './bridge.ts';" },
      { file: 'sandbox/guest/index.ts', text: "import { BRIDGE_GLOBALS } from '../protocol.ts';\nimport './web/url.ts';" },
      { file: 'sandbox/host/run.ts', text: "import ivm from 'isolated-vm';\nimport type { CallLimits } from '../limits.ts';" },
      { file: 'runtime/http/app.ts', text: "import { OpenAPIHono } from '@hono/zod-openapi';\nimport { bodyLimit } from 'hono/body-limit';" },
      { file: 'runtime/service.ts', text: "import { createApp } from './http/app.ts';\nimport { readSandbox } from '../sandbox/index.ts';" },
      { file: 'runtime/honorific.ts', text: "import { x } from 'honorific';" },
    ];
    expect(checkBoundaries(files)).toEqual([]);
  });
});
