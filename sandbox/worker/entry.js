/**
 * The sandbox worker process's entry: turns on Node's compile cache in the folder the supervisor
 * names (argv, not the environment, which a worker gets empty) before loading the worker's
 * modules, so a replacement worker loads them type-stripped and compiled (~150 ms sooner).
 * JavaScript, not TypeScript, on purpose: type-stripping this one file would load Node's
 * TypeScript stripper in every worker (~45 ms of each start, measured 0.14 -> 0.09 s), while the
 * modules below come stripped from the cache.
 */
import { enableCompileCache } from 'node:module';

const folder = process.argv[2];
if (folder !== undefined && folder !== '') enableCompileCache(folder);
await import('./main.ts');
