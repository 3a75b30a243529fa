import { createMiddleware } from 'hono/factory';
import { describeJsonSyntaxError } from '../../json-syntax-error.ts';
import type { AppEnv } from '../env.ts';
import { ProblemError } from '../problem.ts';

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json(\s*;|$)/i;

/**
 * For requests that carry a body: insists on a JSON content type and parses the body once, so a
 * malformed document gets a 400 that says where it broke. Route validators reuse the parsed copy.
 */
export const jsonBody = () =>
  createMiddleware<AppEnv>(async function jsonBody(c, next) {
    if (c.req.method === 'GET' || c.req.method === 'HEAD' || c.req.method === 'DELETE' || c.req.raw.body === null) return next();
    // Node's adapter hands every request a body stream; one that declares no bytes carries none
    // (e.g. POST /v1/tools/reload), so there is nothing to check.
    if (c.req.header('content-length') === '0' && c.req.header('content-type') === undefined) return next();
    const type = c.req.header('content-type');
    if (type === undefined || !JSON_TYPE.test(type)) {
      throw new ProblemError('unsupported-media-type', `Expected a JSON body with "Content-Type: application/json", found ${type === undefined ? 'no Content-Type' : JSON.stringify(type)}.`);
    }
    const text = await c.req.text();
    if (text.trim() === '') throw new ProblemError('invalid-body', 'The request body is empty; expected a JSON document.');
    try {
      JSON.parse(text);
    } catch (error) {
      throw new ProblemError('invalid-body', `Malformed JSON in the request body: ${describeJsonSyntaxError(text, error)}.`);
    }
    await next();
  });
