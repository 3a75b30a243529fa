#!/usr/bin/env node
// Entry for `npx paddock`: the CLI is TypeScript run by Node 24's type stripping, so refuse older Nodes
// with a way forward instead of a syntax error.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`paddock needs Node.js 24 (this is ${process.version}); run it as "npx paddock" or "npm run paddock --" in the checkout, which use the pinned Node 24.\n`);
  process.exit(1);
}
const { runCli } = await import('./main.ts');
runCli(process.argv.slice(2));
