/**
 * The real Deno executable of the pinned `deno` package. Not node_modules/.bin/deno: with the
 * package's install script denied, that is a Node wrapper (deno/bin.cjs) that starts Node to
 * spawnSync the binary, adding ~40-60 ms to every `deno run` (measured: 0.08 s vs ~0.02 s for a
 * one-line script), which would flatter every comparison against Deno. The package's own resolver
 * finds (and hard-links once) the platform binary.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

let resolved: string | undefined;

export function denoBinary(): string {
  resolved ??= (require('deno/install_api.cjs') as { runInstall(): string }).runInstall();
  return resolved;
}
