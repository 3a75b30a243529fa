/**
 * Pins tool management through the HTTP API over a real ToolSystem watching its folder: a tool
 * written with PUT answers the next request; a broken write is a 422 naming every problem while
 * the previous version keeps answering; a file edited on disk goes live; a call in flight during a
 * reload finishes on the bundle it started with; delete removes a tool; and the refusals, each
 * with its exact problem: 400 for a malformed name, 403 for a built-in, 413 for a source over the
 * limit (or a body over http.maxBodyBytes), 404 for deleting what is not there.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOOL_SOURCE_BYTES } from '../../runtime/http/routes/tools.ts';
import { ADMIN_KEY, INVOKE_KEY, bearer } from '../helpers/app.ts';
import { startGate } from './gate.ts';
import type { Gate } from './gate.ts';
import { parseSse, startToolApp, toolSource } from './tool-app.ts';
import type { ToolApp } from './tool-app.ts';

const MAX_BODY = 512 * 1024;

let t: ToolApp;
let gate: Gate;

beforeAll(async () => {
  gate = await startGate();
  t = await startToolApp({
    files: { 'double.ts': toolSource('double', 'return String(params.n * 2);') },
    http: { maxBodyBytes: MAX_BODY },
    policy: { net: ['127.0.0.1'] },
  });
}, 30_000);

afterAll(async () => {
  await t.close();
  await gate.close();
});

const put = (name: string, body: unknown, key = ADMIN_KEY): Promise<Response> =>
  Promise.resolve(t.app.request(`/v1/tools/${name}`, {
    method: 'PUT', headers: { ...bearer(key), 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body),
  }));

const remove = (name: string, key = ADMIN_KEY): Promise<Response> =>
  Promise.resolve(t.app.request(`/v1/tools/${name}`, { method: 'DELETE', headers: bearer(key) }));

const invoke = (name: string, params: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  Promise.resolve(t.app.request(`/v1/tools/${name}/invoke`, {
    method: 'POST', headers: { ...bearer(INVOKE_KEY), 'content-type': 'application/json', ...headers }, body: JSON.stringify({ params }),
  }));

const contentOf = async (name: string, params: unknown): Promise<unknown> => {
  const response = await invoke(name, params);
  const body = await response.json() as { content?: unknown; detail?: unknown };
  return response.status === 200 ? body.content : `${response.status}: ${String(body.detail)}`;
};

/**
 * A problem+json response, whole, without its request id. Tool source problems name file:line:column
 * of the tool's own file by design; what must never show is a host path or a stack.
 */
async function problemOf(response: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  const text = await response.text();
  expect(text).not.toMatch(/\n\s+at |node_modules|\/root\/|\/srv\//);
  expect(text).not.toContain(t.toolsDir);
  expect(text).not.toContain(process.cwd());
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body['requestId']).toBe(response.headers.get('x-request-id'));
  delete body['requestId'];
  return { status: response.status, body };
}

const listNames = async (): Promise<string[]> =>
  ((await (await t.app.request('/v1/tools', { headers: bearer(INVOKE_KEY) })).json()) as { tools: { name: string }[] }).tools.map((tool) => tool.name);

describe('PUT /v1/tools/{name}', () => {
  it('creates a tool (201) that answers the next request', async () => {
    const response = await put('adder', { source: toolSource('adder', 'return String(params.n + 1);') });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ name: 'adder', file: 'adder.ts', created: true, permissions: {}, addedPermissions: {}, removedPermissions: {} });
    expect(await contentOf('adder', { n: 1 })).toBe('2');
    expect(await listNames()).toContain('adder');
  });

  it('replaces it (200), reporting the permissions the new version adds', async () => {
    const response = await put('adder', { source: toolSource('adder', 'return String(params.n + 10);', { permissions: '{ net: ["api.example.com"] }' }) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      name: 'adder', file: 'adder.ts', created: false,
      permissions: { net: ['api.example.com'] }, addedPermissions: { net: ['api.example.com'] }, removedPermissions: {},
    });
    expect(await contentOf('adder', { n: 1 })).toBe('11');
  });

  it('422 for source that does not compile, with file:line:column, and the old version keeps answering', async () => {
    const before = await readFile(path.join(t.toolsDir, 'adder.ts'), 'utf8');
    const broken = `${toolSource('adder', 'return "never";')}\nexport const oops = ;\n`;
    expect(await problemOf(await put('adder', { source: broken }))).toEqual({
      status: 422,
      body: {
        type: 'urn:paddock:problem:invalid-tool-source', title: 'Invalid tool source', status: 422, instance: '/v1/tools/adder',
        detail: 'The tool source was not accepted (1 problem): adder.ts:9:21: Unexpected ";"',
        errors: [{ pointer: '/source', message: 'adder.ts:9:21: Unexpected ";"' }],
      },
    });
    expect(await contentOf('adder', { n: 1 })).toBe('11');
    expect(await readFile(path.join(t.toolsDir, 'adder.ts'), 'utf8')).toBe(before);
  });

  it('422 naming every missing export', async () => {
    expect(await problemOf(await put('adder', { source: 'export const name = "adder";\nexport const parameters = { type: "object" };\n' }))).toEqual({
      status: 422,
      body: {
        type: 'urn:paddock:problem:invalid-tool-source', title: 'Invalid tool source', status: 422, instance: '/v1/tools/adder',
        detail: 'The tool source was not accepted (2 problems): adder.ts: export const description: missing or empty; '
          + 'adder.ts: export default: missing, or not a function (execute(params, ctx))',
        errors: [
          { pointer: '/source', message: 'adder.ts: export const description: missing or empty' },
          { pointer: '/source', message: 'adder.ts: export default: missing, or not a function (execute(params, ctx))' },
        ],
      },
    });
    expect(await contentOf('adder', { n: 1 })).toBe('11');
  });

  it('422 when the source declares another name than the path', async () => {
    const { status, body } = await problemOf(await put('adder', { source: toolSource('subtractor', 'return "x";') }));
    expect(status).toBe(422);
    expect(body['errors']).toEqual([{ pointer: '/source', message: 'export const name: the source declares "subtractor", but it is being written as "adder"' }]);
  });

  it('400 for a name outside ^[a-z][a-z0-9_]{0,63}$', async () => {
    expect(await problemOf(await put('Bad-Name', { source: toolSource('bad', 'return "x";') }))).toEqual({
      status: 400,
      body: {
        type: 'urn:paddock:problem:invalid-tool-name', title: 'Invalid tool name', status: 400, instance: '/v1/tools/Bad-Name',
        detail: '"Bad-Name" is not a valid tool name: it must match ^[a-z][a-z0-9_]{0,63}$ (a lowercase letter, then up to 63 lowercase letters, digits or underscores).',
      },
    });
    expect((await problemOf(await put(`a${'b'.repeat(64)}`, { source: 'x' }))).status).toBe(400);
  });

  it('403 for overwriting a built-in', async () => {
    expect(await problemOf(await put('echo', { source: toolSource('echo', 'return "mine";') }))).toEqual({
      status: 403,
      body: {
        type: 'urn:paddock:problem:builtin-protected', title: 'Built-in tool', status: 403, instance: '/v1/tools/echo',
        detail: '"echo" is a built-in tool; it cannot be overwritten. Choose another name.',
      },
    });
  });

  it('403 for a key without the admin scope', async () => {
    expect(await problemOf(await put('adder', { source: 'x' }, INVOKE_KEY))).toEqual({
      status: 403,
      body: {
        type: 'urn:paddock:problem:forbidden', title: 'Forbidden', status: 403, instance: '/v1/tools/adder',
        detail: 'The key "ci" lacks the "admin" scope this route requires.',
      },
    });
  });

  it('413 for a source over the limit, and for a body over http.maxBodyBytes', async () => {
    const source = `${toolSource('big', 'return "big";')}\n//${'x'.repeat(MAX_TOOL_SOURCE_BYTES)}\n`;
    const size = Buffer.byteLength(source);
    expect(await problemOf(await put('big', { source }))).toEqual({
      status: 413,
      body: {
        type: 'urn:paddock:problem:payload-too-large', title: 'Payload too large', status: 413, instance: '/v1/tools/big',
        detail: `The tool source is ${size} bytes, over the limit of ${MAX_TOOL_SOURCE_BYTES} bytes.`,
      },
    });
    expect(await problemOf(await put('big', { source: 'x'.repeat(MAX_BODY) }))).toEqual({
      status: 413,
      body: {
        type: 'urn:paddock:problem:payload-too-large', title: 'Payload too large', status: 413, instance: '/v1/tools/big',
        detail: `The request body exceeds the limit of ${MAX_BODY} bytes.`,
      },
    });
    expect(await listNames()).not.toContain('big');
  });

  it('400 for a body without source', async () => {
    const { status, body } = await problemOf(await put('adder', { code: 'x' }));
    expect(status).toBe(400);
    expect(body['errors']).toEqual([
      { pointer: '/source', message: 'Invalid input: expected string, received undefined' },
      { pointer: '/', message: 'Unrecognized key: "code"' },
    ]);
  });
});

describe('DELETE /v1/tools/{name}', () => {
  it('204, then the tool is gone (404 on invoke and delete)', async () => {
    await put('doomed', { source: toolSource('doomed', 'return "here";') });
    expect(await contentOf('doomed', { n: 1 })).toBe('here');
    const response = await remove('doomed');
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(await contentOf('doomed', { n: 1 })).toBe('404: There is no tool named "doomed". Available tools: echo, adder, double.');
    expect(await problemOf(await remove('doomed'))).toEqual({
      status: 404,
      body: {
        type: 'urn:paddock:problem:not-found', title: 'Not found', status: 404, instance: '/v1/tools/doomed',
        detail: 'There is no user tool named "doomed".',
      },
    });
  });

  it('403 for a built-in, which stays', async () => {
    expect(await problemOf(await remove('echo'))).toEqual({
      status: 403,
      body: {
        type: 'urn:paddock:problem:builtin-protected', title: 'Built-in tool', status: 403, instance: '/v1/tools/echo',
        detail: '"echo" is a built-in tool; it cannot be deleted.',
      },
    });
    expect(await listNames()).toContain('echo');
  });

  it('403 for a key without the admin scope', async () => {
    expect((await problemOf(await remove('double', INVOKE_KEY))).status).toBe(403);
    expect(await listNames()).toContain('double');
  });
});

describe('hot reload through the API', () => {
  it('a file edited on disk goes live', async () => {
    const replaced = t.nextChange((change) => change.type === 'tool-replaced' && change.name === 'double');
    await writeFile(path.join(t.toolsDir, 'double.ts'), toolSource('double', 'return "doubled " + String(params.n * 2);'));
    await replaced;
    expect(await contentOf('double', { n: 4 })).toBe('doubled 8');
  });

  it('a call in flight during a reload finishes on the bundle it started with', async () => {
    const gated = (version: string) => toolSource('gated', `ctx.update("${version} waiting"); const response = await fetch("${gate.url}/" + params.key); return "${version}: " + await response.text();`, {
      parameters: '{ type: "object", properties: { key: { type: "string" } }, required: ["key"] }',
      permissions: '{ net: ["127.0.0.1"] }',
    });
    expect((await put('gated', { source: gated('v1') })).status).toBe(201);
    const inFlight = invoke('gated', { key: 'in-flight' }, { accept: 'text/event-stream' });
    await gate.arrived('in-flight');

    await writeFile(path.join(t.toolsDir, 'gated.ts'), gated('v2'));
    const reload = await t.app.request('/v1/tools/reload', { method: 'POST', headers: bearer(ADMIN_KEY) });
    expect(reload.status).toBe(200);
    gate.open('later', 'answered');
    expect(await contentOf('gated', { key: 'later' })).toBe('v2: answered');

    gate.open('in-flight', 'answered');
    const events = parseSse(await (await inFlight).text());
    expect(events.map((event) => [event.event, JSON.parse(event.data) as unknown])).toEqual([
      ['update', { text: 'v1 waiting' }],
      ['result', expect.objectContaining({ tool: 'gated', ok: true, content: 'v1: answered' }) as unknown],
    ]);
  });
});
