/**
 * The sandbox worker process's entry. Its arguments (not the environment, which a worker gets
 * empty): how many nice steps below the service to run, then the folder of Node's compile cache,
 * turned on before the worker's modules load so a replacement worker loads them type-stripped and
 * compiled (~150 ms sooner). JavaScript, not TypeScript, on purpose: type-stripping this one file
 * would load Node's TypeScript stripper in every worker (~45 ms of each start, measured
 * 0.14 -> 0.09 s), while the modules below come stripped from the compile cache.
 */
import { enableCompileCache } from 'node:module';
import { getPriority, setPriority } from 'node:os';

const [niceSteps, folder] = process.argv.slice(2);

/*
 * Below the service's priority (sandbox.workerNiceSteps, at most nice 19): when tools keep every
 * core busy, the coordinator (HTTP, the agent loop, the supervisor) still runs first, and a worker
 * preparing its next isolate does not delay the coordinator's handling of a reply (measured, paced
 * calls interleaved with and without: p99 5.1 -> 3.1 ms; throughput unchanged). Set first, so the
 * threads isolated-vm starts later inherit it (Linux keeps a nice value per thread).
 */
const steps = Number(niceSteps);
try {
  if (Number.isInteger(steps) && steps > 0) setPriority(Math.min(19, getPriority() + steps));
} catch {
  // Refused (a platform without priorities): the worker runs at the service's priority.
}

if (folder !== undefined && folder !== '') enableCompileCache(folder);
await import('./main.ts');
