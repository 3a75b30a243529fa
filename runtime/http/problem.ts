import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { InvalidGrantsError, InvalidParamsError, ToolNotFoundError } from '../coordinator/coordinator.ts';
import { OverloadedError } from '../coordinator/limiter.ts';
import { ToolSourceError } from '../registry/loader.ts';
import { RegistryError } from '../registry/registry.ts';

/** Every problem Paddock reports over HTTP, with its one status code (RFC 9457 `type` suffix -> status). */
const PROBLEMS = {
  'invalid-body': { status: 400, title: 'Invalid request body' },
  'invalid-params': { status: 400, title: 'Invalid parameters' },
  'invalid-tool-name': { status: 400, title: 'Invalid tool name' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  'builtin-protected': { status: 403, title: 'Built-in tool' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'invalid-tool-source': { status: 422, title: 'Invalid tool source' },
  overloaded: { status: 429, title: 'Too many requests' },
  internal: { status: 500, title: 'Internal server error' },
  'bad-gateway': { status: 502, title: 'Bad gateway' },
  unavailable: { status: 503, title: 'Service unavailable' },
} as const satisfies Record<string, { status: ContentfulStatusCode; title: string }>;

export type ProblemType = keyof typeof PROBLEMS;

/** The one error type route code throws; `problemResponse` turns it into application/problem+json. */
export class ProblemError extends Error {
  readonly type: ProblemType;
  readonly extensions: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    type: ProblemType,
    detail: string,
    options: { extensions?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail, { cause: options.cause });
    this.name = new.target.name;
    this.type = type;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }
}

export function problemStatus(type: ProblemType): ContentfulStatusCode {
  return PROBLEMS[type].status;
}

/**
 * Translates what the tool system throws before a call runs (or a registry change is made) into
 * the problem a client sees; anything else is returned as it is. The one place where coordinator
 * and registry errors meet HTTP statuses.
 */
export function toolProblem(error: unknown): unknown {
  if (error instanceof ProblemError) return error;
  if (error instanceof ToolNotFoundError) return new ProblemError('not-found', error.message, { cause: error });
  if (error instanceof InvalidParamsError) {
    // Pointers into the request body, whose `params` member the tool's schema checked.
    const errors = error.violations.map((violation) => ({ pointer: `/params${violation.pointer}`, message: violation.message }));
    const summary = errors.map((entry) => `${entry.pointer} ${entry.message}`).join('; ');
    return new ProblemError('invalid-params', `The params do not match the tool's schema: ${summary}.`, { extensions: { errors }, cause: error });
  }
  if (error instanceof InvalidGrantsError) {
    return new ProblemError('invalid-body', error.message, { extensions: { errors: [{ pointer: '/grants', message: error.message }] }, cause: error });
  }
  if (error instanceof OverloadedError) {
    return new ProblemError('overloaded', error.message, { headers: { 'retry-after': String(error.retryAfterSeconds) }, cause: error });
  }
  if (error instanceof ToolSourceError) {
    const count = error.problems.length === 1 ? '1 problem' : `${error.problems.length} problems`;
    return new ProblemError('invalid-tool-source', `The tool source was not accepted (${count}): ${error.problems.join('; ')}`, {
      extensions: { errors: error.problems.map((problem) => ({ pointer: '/source', message: problem })) },
      cause: error,
    });
  }
  if (error instanceof RegistryError) {
    const type = error.code === 'builtin_protected' ? 'builtin-protected' : error.code === 'name_taken' ? 'conflict' : 'not-found';
    return new ProblemError(type, error.message, { cause: error });
  }
  return error;
}

/** The RFC 9457 body for a problem, as a JSON value (also sent as an SSE `error` event). */
export function problemBody(c: Context, problem: ProblemError): Record<string, unknown> {
  const { status, title } = PROBLEMS[problem.type];
  const requestId = c.get('requestId') as string | undefined;
  return {
    ...problem.extensions,
    type: `urn:paddock:problem:${problem.type}`,
    title,
    status,
    detail: problem.message,
    instance: c.req.path,
    ...(requestId === undefined ? {} : { requestId }),
  };
}

/**
 * Builds the response for any error. Anything that is not a ProblemError becomes a bare 500: its
 * message, stack and paths stay in the log, never in the response.
 */
export function problemResponse(c: Context, error: unknown): Response {
  const problem = asProblem(error);
  return c.body(JSON.stringify(problemBody(c, problem)), PROBLEMS[problem.type].status, { ...problem.headers, 'content-type': 'application/problem+json' });
}

/** A ProblemError as it is, anything else as a bare 500 whose cause stays in the log. */
export function asProblem(error: unknown): ProblemError {
  return error instanceof ProblemError ? error : new ProblemError('internal', 'The server could not complete the request; the error was logged.');
}
