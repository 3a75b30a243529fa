import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** Every problem Paddock reports over HTTP, with its one status code (RFC 9457 `type` suffix -> status). */
const PROBLEMS = {
  'invalid-body': { status: 400, title: 'Invalid request body' },
  'invalid-params': { status: 400, title: 'Invalid parameters' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'invalid-tool-source': { status: 422, title: 'Invalid tool source' },
  overloaded: { status: 429, title: 'Too many requests' },
  internal: { status: 500, title: 'Internal server error' },
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
 * Builds the response for any error. Anything that is not a ProblemError becomes a bare 500: its
 * message, stack and paths stay in the log, never in the response.
 */
export function problemResponse(c: Context, error: unknown): Response {
  const problem = error instanceof ProblemError ? error : new ProblemError('internal', 'The server could not complete the request; the error was logged.');
  const { status, title } = PROBLEMS[problem.type];
  const requestId = c.get('requestId') as string | undefined;
  const body = {
    ...problem.extensions,
    type: `urn:paddock:problem:${problem.type}`,
    title,
    status,
    detail: problem.message,
    instance: c.req.path,
    ...(requestId === undefined ? {} : { requestId }),
  };
  return c.body(JSON.stringify(body), status, { ...problem.headers, 'content-type': 'application/problem+json' });
}
