import type { BuiltinTool, ExecResult } from '../contract.ts';
import { errorMessage, failure, preview, stringParam, success } from './tool-results.ts';

const RESULT_PREVIEW_CHARS = 16_000;
const LOG_PREVIEW_CHARS = 4_000;

/**
 * code_exec: the same as POST /v1/exec. A fresh isolate in a sandbox worker; the host's exec passes
 * no grant, so the snippet has no network, files or environment.
 */
export const codeExec: BuiltinTool = {
  name: 'code_exec',
  description:
    'Run a JavaScript or TypeScript snippet in a fresh sandboxed isolate and get its return value and console output. ' +
    'The code is the body of an async function: `return` the result, `await` freely. ' +
    'Web-standard APIs (URL, TextEncoder, crypto.randomUUID, structuredClone, JSON, Math, Intl, Date) are there; ' +
    'network, files, environment, imports and Node APIs are not. ' +
    'Use it for calculations, parsing and transforming data, or checking how code behaves.',
  parameters: {
    type: 'object',
    properties: {
      code: { type: 'string', minLength: 1, description: 'The body of an async function, e.g. `const xs = [3, 1, 2]; return xs.sort();`' },
      language: { type: 'string', enum: ['ts', 'js'], description: 'TypeScript (types are stripped) or JavaScript. Default: ts.' },
    },
    required: ['code'],
    additionalProperties: false,
  },
  kind: 'execute',
  mode: 'sequential',
  async execute(params, context) {
    const code = stringParam(params, 'code') ?? '';
    const language = stringParam(params, 'language') === 'js' ? 'js' : 'ts';
    let outcome: ExecResult;
    try {
      outcome = await context.host.exec(code, language, context.signal);
    } catch (error) {
      return failure(`code_exec could not run the snippet: ${errorMessage(error)}. Try again in a moment.`);
    }
    const metadata = {
      ok: outcome.ok, result: outcome.result, logs: outcome.logs, durationMs: Math.round(outcome.durationMs),
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
    };
    const consoleLines = formatLogs(outcome.logs);
    if (outcome.ok) return success([formatResult(outcome.result), ...consoleLines].join('\n'), metadata);
    const error = outcome.error ?? { kind: 'tool_error', message: 'The snippet failed.' };
    return failure([`Error (${error.kind}): ${error.name === undefined ? '' : `${error.name}: `}${error.message}`, ...consoleLines, hint(error.kind, error.name)].join('\n'), metadata);
  },
};

function formatResult(result: unknown): string {
  if (result === null || result === undefined) return '(no return value; use `return` to give one)';
  return preview(typeof result === 'string' ? result : JSON.stringify(result, null, 2), RESULT_PREVIEW_CHARS);
}

function formatLogs(logs: ExecResult['logs']): string[] {
  if (logs.length === 0) return [];
  const text = logs.map((line) => (line.level === 'log' || line.level === 'info' ? line.text : `[${line.level}] ${line.text}`)).join('\n');
  return ['', 'Console output:', preview(text, LOG_PREVIEW_CHARS)];
}

function hint(kind: string, name: string | undefined): string {
  const next = (() => {
    if (kind === 'not_capable') return 'code_exec runs without grants: no network, files or environment. A task that needs them belongs in a tool with declared permissions (tool_manual {"name":"write_tool"}).';
    if (kind === 'timeout') return 'The snippet ran past its time limit: make it do less work, or check for an endless loop or a promise that never settles.';
    if (kind === 'memory_limit') return 'The snippet ran out of memory: work on less data at once.';
    if (kind === 'output_limit') return 'The result or console output was too large: return a summary instead of the whole data.';
    if (name === 'SyntaxError') return 'Fix the syntax; the code is the body of an async function (top-level `return` and `await` work, `import` does not).';
    return 'Fix the code and run it again.';
  })();
  return `\n${next}`;
}
