import { isDeepStrictEqual } from 'node:util';
import { Worker } from 'node:worker_threads';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * test_tool's expectations, checked against a tool's output text. `regex` and `jsonSchema` run
 * caller-written patterns on tool-written text, so test_tool checks them in a worker thread that
 * is terminated past a deadline: a catastrophic backtrack costs that thread, never the service.
 */

export interface Expectation {
  equals?: unknown;
  contains?: string;
  regex?: string;
  jsonSchema?: Record<string, unknown>;
}

export const CHECKS = ['equals', 'contains', 'regex', 'jsonSchema'] as const;
export type CheckName = (typeof CHECKS)[number];

export interface CheckOutcome {
  readonly check: CheckName;
  /** `invalid`: the expectation itself cannot be used (a bad pattern or schema). */
  readonly status: 'pass' | 'fail' | 'invalid';
  readonly reason: string;
}

/** Every given expectation, in a fixed order; all must pass. */
export function checkExpectations(output: string, expectation: Expectation): CheckOutcome[] {
  const outcomes: CheckOutcome[] = [];
  if (Object.hasOwn(expectation, 'equals')) outcomes.push(checkEquals(output, expectation.equals));
  if (expectation.contains !== undefined) outcomes.push(checkContains(output, expectation.contains));
  if (expectation.regex !== undefined) outcomes.push(checkRegex(output, expectation.regex));
  if (expectation.jsonSchema !== undefined) outcomes.push(checkJsonSchema(output, expectation.jsonSchema));
  return outcomes;
}

/** Whether the expectation runs caller-written patterns (checked in a worker thread). */
export function needsIsolation(expectation: Expectation): boolean {
  return expectation.regex !== undefined || expectation.jsonSchema !== undefined;
}

export class CheckTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`checking the output took longer than ${timeoutMs} ms and was stopped (a regular expression or schema pattern that backtracks catastrophically?)`);
    this.name = new.target.name;
  }
}

const WORKER_URL = new URL('./expectation-worker.ts', import.meta.url);

/** One idle checking thread is kept (unreferenced, so it never holds the process open): starting one costs ~150 ms. */
let idleWorker: Worker | undefined;

function takeWorker(): Worker {
  const cached = idleWorker;
  idleWorker = undefined;
  if (cached !== undefined) {
    cached.ref();
    return cached;
  }
  const worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: 128 }, stdout: true, stderr: true });
  worker.once('exit', () => { if (idleWorker === worker) idleWorker = undefined; });
  return worker;
}

function releaseWorker(worker: Worker): void {
  if (idleWorker !== undefined) {
    void worker.terminate();
    return;
  }
  worker.unref();
  idleWorker = worker;
}

/** checkExpectations in a worker thread, which is terminated after `timeoutMs` or on abort. */
export function checkInWorker(output: string, expectation: Expectation, options: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<CheckOutcome[]> {
  return new Promise((resolve, reject) => {
    options.signal?.throwIfAborted();
    const worker = takeWorker();
    let settled = false;
    const finish = (keepWorker: boolean, settle: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (keepWorker) releaseWorker(worker);
      else void worker.terminate();
      settle();
    };
    const timer = setTimeout(() => { finish(false, () => { reject(new CheckTimeoutError(options.timeoutMs)); }); }, options.timeoutMs);
    const onAbort = (): void => {
      const reason: unknown = options.signal?.reason;
      finish(false, () => { reject(reason instanceof Error ? reason : new Error('The check was aborted.')); });
    };
    const onMessage = (outcomes: CheckOutcome[]): void => { finish(true, () => { resolve(outcomes); }); };
    const onError = (error: Error): void => { finish(false, () => { reject(error); }); };
    const onExit = (code: number): void => { finish(false, () => { reject(new Error(`the checking thread stopped (exit code ${code}) before it answered`)); }); };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.postMessage({ output, expectation });
  });
}

function pass(check: CheckName, reason: string): CheckOutcome {
  return { check, status: 'pass', reason };
}

function fail(check: CheckName, reason: string): CheckOutcome {
  return { check, status: 'fail', reason };
}

function invalid(check: CheckName, reason: string): CheckOutcome {
  return { check, status: 'invalid', reason };
}

/** A short quoted excerpt for a reason line. */
function quote(text: string, limit = 60): string {
  return JSON.stringify(text.length <= limit ? text : `${text.slice(0, limit)}…`);
}

function checkEquals(output: string, expected: unknown): CheckOutcome {
  if (typeof expected === 'string') {
    if (output === expected) return pass('equals', 'the output equals the expected text');
    if (output.trim() === expected.trim()) return fail('equals', 'the output differs from the expected text only in leading or trailing whitespace (a final newline?)');
    let at = 0;
    while (at < output.length && at < expected.length && output[at] === expected[at]) at++;
    const before = output.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    const length = output.length === expected.length ? '' : ` (the output has ${output.length} characters, the expected text ${expected.length})`;
    return fail('equals', `the output differs at character ${at + 1} (line ${line}, column ${column}): expected ${quote(expected.slice(at))}, got ${quote(output.slice(at))}${length}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(output);
  } catch {
    return fail('equals', `the output is not JSON, so it cannot equal the JSON value ${quote(JSON.stringify(expected), 120)}`);
  }
  if (isDeepStrictEqual(parsed, expected)) return pass('equals', 'the output, parsed as JSON, equals the expected value');
  return fail('equals', `the output, parsed as JSON, differs from the expected value: ${jsonDifference(parsed, expected, '')}`);
}

/** Where two JSON values first differ, as a JSON pointer and both sides. */
function jsonDifference(actual: unknown, expected: unknown, pointer: string): string {
  const at = pointer === '' ? 'at the top level' : `at ${pointer}`;
  const bothObjects = typeof actual === 'object' && actual !== null && typeof expected === 'object' && expected !== null;
  if (!bothObjects || Array.isArray(actual) !== Array.isArray(expected)) {
    return `${at} expected ${quote(jsonText(expected))}, got ${quote(jsonText(actual))}`;
  }
  if (Array.isArray(actual) && Array.isArray(expected) && actual.length !== expected.length) {
    const shared = Math.min(actual.length, expected.length);
    for (let index = 0; index < shared; index++) {
      if (!isDeepStrictEqual(actual[index], expected[index])) return jsonDifference(actual[index], expected[index], `${pointer}/${index}`);
    }
    return `${at} expected an array of ${expected.length} items, got ${actual.length}`;
  }
  const actualRecord = actual as Record<string, unknown>;
  const expectedRecord = expected as Record<string, unknown>;
  for (const key of Object.keys(expectedRecord)) {
    const child = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (!Object.hasOwn(actualRecord, key)) return `${child} is missing`;
    if (!isDeepStrictEqual(actualRecord[key], expectedRecord[key])) return jsonDifference(actualRecord[key], expectedRecord[key], child);
  }
  const extra = Object.keys(actualRecord).find((key) => !Object.hasOwn(expectedRecord, key));
  return extra === undefined ? `${at} the values differ` : `${pointer}/${extra} is not expected`;
}

/** JSON.stringify, which gives undefined (whatever its type says) for undefined and functions. */
function jsonText(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? 'undefined' : text;
}

function checkContains(output: string, needle: string): CheckOutcome {
  if (output.includes(needle)) return pass('contains', `the output contains ${quote(needle)}`);
  const ignoringCase = output.toLowerCase().includes(needle.toLowerCase()) ? ' (it does contain it when case is ignored)' : '';
  return fail('contains', `the output does not contain ${quote(needle)}${ignoringCase}`);
}

/** `pattern`, or `/pattern/flags` for flags. */
function checkRegex(output: string, source: string): CheckOutcome {
  const literal = /^\/([\s\S]+)\/([dgimsuvy]*)$/.exec(source);
  const pattern = literal?.[1] ?? source;
  const flags = literal?.[2] ?? '';
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, flags);
  } catch (error) {
    return invalid('regex', `${quote(source)} is not a valid regular expression: ${(error as Error).message}`);
  }
  const shown = `/${regex.source}/${regex.flags}`;
  const match = regex.exec(output);
  if (match === null) return fail('regex', `the output does not match ${shown}`);
  return pass('regex', `the output matches ${shown} (at character ${match.index + 1}: ${quote(match[0])})`);
}

// ajv-formats is CommonJS with a default export that Node's ESM interop wraps once more.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

function checkJsonSchema(output: string, schema: Record<string, unknown>): CheckOutcome {
  // A fresh instance per check: caller schemas must not accumulate in a shared one.
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, logger: false }));
  let validate;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    return invalid('jsonSchema', `the JSON Schema cannot be used: ${(error as Error).message}`);
  }
  let value: unknown = output;
  let isJson = true;
  try {
    value = JSON.parse(output);
  } catch {
    isJson = false;
  }
  if (validate(value)) return pass('jsonSchema', isJson ? 'the output, parsed as JSON, matches the schema' : 'the output (not JSON, so checked as a string) matches the schema');
  const errors = (validate.errors ?? []).slice(0, 10).map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`);
  const more = (validate.errors?.length ?? 0) > 10 ? `; and ${(validate.errors?.length ?? 0) - 10} more` : '';
  return fail('jsonSchema', `${isJson ? 'the output, parsed as JSON,' : 'the output is not JSON, so it was checked as a string, and it'} does not match the schema: ${errors.join('; ')}${more}`);
}
