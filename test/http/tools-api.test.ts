/**
 * Pins the tool API a program calls (SPEC §5) through app.request() over a real ToolSystem with a
 * sandbox worker: the live list with load errors; invoke as JSON and as SSE (`update` events, then
 * exactly one `result`), where a tool failure is a 200 result that keeps its error kind; the
 * refusals before a call runs (404 unknown tool, 400 every params violation, 400 malformed grants)
 * with exact problem bodies, also when a stream was asked for; request grants that only narrow;
 * exec with its logs; manuals; POST /v1/tools/reload's report; and the OpenAPI document listing
 * every route with every status.
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, INVOKE_KEY, bearer, expectNoLeak, makeTestApp } from '../helpers/app.ts';
import { parseSse, startToolApp, toolSource } from './tool-app.ts';
import type { ToolApp } from './tool-app.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const DOUBLE_PARAMS = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false };

let t: ToolApp;

beforeAll(async () => {
  t = await startToolApp({
    files: {
      'double.ts': toolSource('double', 'return String(params.n * 2);'),
      'chatty.ts': toolSource('chatty', 'ctx.update("one"); ctx.update("two"); return "done";', { parameters: '{ type: "object" }' }),
      'failing.ts': toolSource('failing', 'throw new Error("boom: n was " + params.n);'),
      'fetcher.ts': toolSource('fetcher', 'const response = await fetch("http://example.com/"); return String(response.status);'),
      'rich.ts': toolSource('rich', 'return { content: "rich", metadata: { rows: params.n } };'),
      'can_net.ts': toolSource('can_net', 'return (await Deno.permissions.query({ name: "net", host: params.host })).state;', {
        parameters: '{ type: "object", properties: { host: { type: "string" } }, required: ["host"] }',
        permissions: '{ net: ["127.0.0.1"] }',
      }),
      'broken.ts': 'export const name = "broken";\nexport default function (: {}\n',
    },
    manuals: { 'echo.md': '# echo\n\nThe hand-written manual.\n' },
    // The key's policy allows both hosts; can_net declares only 127.0.0.1.
    policy: { net: ['127.0.0.1', 'example.com'] },
  });
}, 30_000);

afterAll(async () => {
  await t.close();
});

const invoke = (name: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  Promise.resolve(t.app.request(`/v1/tools/${name}/invoke`, {
    method: 'POST', headers: { ...bearer(INVOKE_KEY), 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  }));

const post = (route: string, body: unknown, key = INVOKE_KEY): Promise<Response> =>
  Promise.resolve(t.app.request(route, {
    method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify(body),
  }));

/** A problem+json response, whole, with its request id. */
async function problemOf(response: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  const text = await response.text();
  expectNoLeak(text);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body['requestId']).toBe(response.headers.get('x-request-id'));
  delete body['requestId'];
  return { status: response.status, body };
}

describe('GET /v1/tools', () => {
  it('lists built-in and user tools with their schema, kind, source and permissions, and the files that failed', async () => {
    const response = await t.app.request('/v1/tools', { headers: bearer(INVOKE_KEY) });
    expect(response.status).toBe(200);
    const body = await response.json() as { tools: Record<string, unknown>[]; errors: Record<string, unknown>[] };
    expect(body.tools.map((tool) => tool['name'])).toEqual(['echo', 'can_net', 'chatty', 'double', 'failing', 'fetcher', 'rich']);
    expect(body.tools[0]).toEqual({
      name: 'echo', description: 'Echoes its text.', kind: 'read', source: 'builtin', permissions: {},
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    });
    expect(body.tools.find((tool) => tool['name'] === 'double')).toEqual({
      name: 'double', description: 'Test tool double.', kind: 'read', source: 'user', permissions: {}, parameters: DOUBLE_PARAMS,
    });
    expect(body.tools.find((tool) => tool['name'] === 'can_net')).toMatchObject({ kind: 'web', permissions: { net: ['127.0.0.1'] } });
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]).toEqual({ file: 'broken.ts', message: expect.stringMatching(/^broken\.ts:2:\d+: /) as unknown });
  });
});

describe('POST /v1/tools/{name}/invoke (JSON)', () => {
  it('runs a user tool and answers the InvokeResult', async () => {
    const response = await invoke('double', { params: { n: 21 } });
    expect(response.status).toBe(200);
    const body = await response.json() as Record<string, unknown>;
    expect(body).toEqual({ callId: expect.stringMatching(UUID) as unknown, tool: 'double', ok: true, content: '42', metadata: null, durationMs: expect.any(Number) as unknown });
  });

  it('runs a built-in through the same route', async () => {
    const body = await (await invoke('echo', { params: { text: 'hi' } })).json();
    expect(body).toMatchObject({ tool: 'echo', ok: true, content: 'hi', metadata: null });
  });

  it('passes a result object\'s metadata through', async () => {
    expect(await (await invoke('rich', { params: { n: 3 } })).json()).toMatchObject({ ok: true, content: 'rich', metadata: { rows: 3 } });
  });

  it('answers a tool that throws with 200 and ok:false, keeping the error kind', async () => {
    const response = await invoke('failing', { params: { n: 7 } });
    expect(response.status).toBe(200);
    const body = await response.json() as Record<string, unknown>;
    expect(body).toMatchObject({ tool: 'failing', ok: false, content: '', error: { kind: 'tool_error', message: 'boom: n was 7' }, metadata: null });
  });

  it('reports a denied capability as not_capable with Deno\'s message', async () => {
    const body = await (await invoke('fetcher', { params: { n: 1 } })).json() as Record<string, unknown>;
    expect(body['ok']).toBe(false);
    expect(body['error']).toEqual({ kind: 'not_capable', message: 'Requires net access to "example.com:80", run again with the --allow-net flag' });
  });

  it('treats omitted params as {}', async () => {
    expect(await (await invoke('chatty', {})).json()).toMatchObject({ ok: true, content: 'done' });
  });
});

describe('request grants only narrow', () => {
  const state = async (host: string, grants?: unknown) =>
    ((await (await invoke('can_net', grants === undefined ? { params: { host } } : { params: { host }, grants })).json()) as { content: string }).content;

  it('grants what the tool declares and the policy allows', async () => {
    expect(await state('127.0.0.1')).toBe('granted');
  });

  it('narrows to nothing when the request grants no net', async () => {
    expect(await state('127.0.0.1', { net: [] })).not.toBe('granted');
  });

  it('cannot widen: net:true still leaves a host the tool did not declare ungranted', async () => {
    expect(await state('example.com', { net: true })).not.toBe('granted');
    expect(await state('127.0.0.1', { net: true })).toBe('granted');
  });
});

describe('invoke refusals', () => {
  it('404 for an unknown tool, naming the tools there are', async () => {
    expect(await problemOf(await invoke('nope', { params: {} }))).toEqual({
      status: 404,
      body: {
        type: 'urn:paddock:problem:not-found', title: 'Not found', status: 404, instance: '/v1/tools/nope/invoke',
        detail: 'There is no tool named "nope". Available tools: echo, can_net, chatty, double, failing, fetcher, rich.',
      },
    });
  });

  it('400 listing every params violation with its pointer into the body', async () => {
    expect(await problemOf(await invoke('double', { params: { n: 'x', extra: 1 } }))).toEqual({
      status: 400,
      body: {
        type: 'urn:paddock:problem:invalid-params', title: 'Invalid parameters', status: 400, instance: '/v1/tools/double/invoke',
        detail: 'The params do not match the tool\'s schema: /params/extra is not an allowed property; /params/n must be number.',
        errors: [
          { pointer: '/params/extra', message: 'is not an allowed property' },
          { pointer: '/params/n', message: 'must be number' },
        ],
      },
    });
  });

  it('400 for missing required params', async () => {
    const { body } = await problemOf(await invoke('double', { params: {} }));
    expect(body['errors']).toEqual([{ pointer: '/params/n', message: 'is required but missing' }]);
  });

  it('400 for grants of the wrong shape, naming each violation', async () => {
    expect(await problemOf(await invoke('double', { params: { n: 1 }, grants: { net: 'yes', run: true } }))).toEqual({
      status: 400,
      body: {
        type: 'urn:paddock:problem:invalid-body', title: 'Invalid request body', status: 400, instance: '/v1/tools/double/invoke',
        detail: 'Invalid request body: /grants/net: must be true, false or a list of strings; /grants: Unrecognized key: "run"',
        errors: [
          { pointer: '/grants/net', message: 'must be true, false or a list of strings' },
          { pointer: '/grants', message: 'Unrecognized key: "run"' },
        ],
      },
    });
  });

  it('400 for a grant entry that is not a host', async () => {
    const message = 'Invalid grants: invalid value \'http://exa mple.com/\': URLs are not supported, only domains and IPs';
    expect(await problemOf(await invoke('double', { params: { n: 1 }, grants: { net: ['http://exa mple.com/'] } }))).toEqual({
      status: 400,
      body: {
        type: 'urn:paddock:problem:invalid-body', title: 'Invalid request body', status: 400, instance: '/v1/tools/double/invoke',
        detail: message, errors: [{ pointer: '/grants', message }],
      },
    });
  });

  it('400 for an unknown body member', async () => {
    expect(await problemOf(await invoke('double', { parameters: { n: 1 } }))).toEqual({
      status: 400,
      body: {
        type: 'urn:paddock:problem:invalid-body', title: 'Invalid request body', status: 400, instance: '/v1/tools/double/invoke',
        detail: 'Invalid request body: /: Unrecognized key: "parameters"', errors: [{ pointer: '/', message: 'Unrecognized key: "parameters"' }],
      },
    });
  });

  it('keeps the refusal statuses when a stream was asked for', async () => {
    const sse = { accept: 'text/event-stream' };
    expect((await problemOf(await invoke('nope', { params: {} }, sse))).status).toBe(404);
    expect((await problemOf(await invoke('double', { params: { n: 'x' } }, sse))).body['errors']).toEqual([{ pointer: '/params/n', message: 'must be number' }]);
  });
});

describe('POST /v1/tools/{name}/invoke (SSE)', () => {
  it('streams `update` events, then exactly one `result` with the JSON result', async () => {
    const response = await invoke('chatty', { params: {} }, { accept: 'text/event-stream' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = parseSse(await response.text());
    expect(events.map((event) => event.event)).toEqual(['update', 'update', 'result']);
    expect(events.slice(0, 2).map((event) => JSON.parse(event.data) as unknown)).toEqual([{ text: 'one' }, { text: 'two' }]);
    expect(JSON.parse(events[2]!.data)).toEqual({
      callId: expect.stringMatching(UUID) as unknown, tool: 'chatty', ok: true, content: 'done', metadata: null, durationMs: expect.any(Number) as unknown,
    });
  });

  it('streams a built-in\'s updates the same way', async () => {
    const response = await invoke('echo', { params: { text: 'hey' } }, { accept: 'application/json;q=0.5, text/event-stream' });
    const events = parseSse(await response.text());
    expect(events.map((event) => [event.event, JSON.parse(event.data) as Record<string, unknown>]))
      .toEqual([['update', { text: 'echoing hey' }], ['result', expect.objectContaining({ tool: 'echo', content: 'hey' }) as unknown]]);
  });

  it('sends a failed call as its one result', async () => {
    const events = parseSse(await (await invoke('failing', { params: { n: 2 } }, { accept: 'text/event-stream' })).text());
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.data)).toMatchObject({ ok: false, error: { kind: 'tool_error', message: 'boom: n was 2' } });
  });
});

describe('POST /v1/exec', () => {
  it('runs a TypeScript snippet and returns its result and logs', async () => {
    const response = await post('/v1/exec', { code: 'const x: number = 20;\nconsole.log("computing", x);\nconsole.error("careful");\nreturn { answer: x * 2 + 2 };' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ok: true, result: { answer: 42 }, logs: [{ level: 'info', text: 'computing 20' }, { level: 'error', text: 'careful' }],
    });
  });

  it('answers a snippet that throws with ok:false, its logs and the error', async () => {
    const body = await (await post('/v1/exec', { code: 'console.log("before"); throw new Error("nope");', language: 'js' })).json();
    expect(body).toEqual({ ok: false, result: null, logs: [{ level: 'info', text: 'before' }], error: { kind: 'tool_error', message: 'nope' } });
  });

  it('reports a snippet that does not compile with its line and column', async () => {
    expect(await (await post('/v1/exec', { code: 'return 1 +;' })).json())
      .toEqual({ ok: false, result: null, logs: [], error: { kind: 'compile_error', message: 'snippet.ts:1:11: Unexpected ";"' } });
  });

  it('grants nothing unless asked for, and only within the policy', async () => {
    const code = 'return (await Deno.permissions.query({ name: "net", host: "example.com" })).state;';
    expect(await (await post('/v1/exec', { code })).json()).toMatchObject({ ok: true, result: 'prompt' });
    expect(await (await post('/v1/exec', { code, grants: { net: ['example.com'] } })).json()).toMatchObject({ ok: true, result: 'granted' });
    expect(await (await post('/v1/exec', { code: code.replace('example.com', 'example.org'), grants: { net: true } })).json())
      .toMatchObject({ ok: true, result: 'prompt' });
  });

  it('400 for a body without code or with an unknown language', async () => {
    expect(await problemOf(await post('/v1/exec', { language: 'py' }))).toEqual({
      status: 400,
      body: {
        type: 'urn:paddock:problem:invalid-body', title: 'Invalid request body', status: 400, instance: '/v1/exec',
        detail: 'Invalid request body: /code: Invalid input: expected string, received undefined; /language: Invalid option: expected one of "ts"|"js"',
        errors: [
          { pointer: '/code', message: 'Invalid input: expected string, received undefined' },
          { pointer: '/language', message: 'Invalid option: expected one of "ts"|"js"' },
        ],
      },
    });
  });
});

describe('GET /v1/manuals/{name}', () => {
  it('serves manuals/<name>.md as Markdown', async () => {
    const response = await t.app.request('/v1/manuals/echo', { headers: bearer(INVOKE_KEY) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(await response.text()).toBe('# echo\n\nThe hand-written manual.\n');
  });

  it('generates one from the schema when there is no file', async () => {
    const text = await (await t.app.request('/v1/manuals/double', { headers: bearer(INVOKE_KEY) })).text();
    expect(text).toMatch(/^# double\n\nTest tool double\.\n/);
    expect(text).toContain('- `n` (number, required):');
  });

  it('404 for an unknown tool', async () => {
    expect(await problemOf(await t.app.request('/v1/manuals/nope', { headers: bearer(INVOKE_KEY) }))).toEqual({
      status: 404,
      body: {
        type: 'urn:paddock:problem:not-found', title: 'Not found', status: 404, instance: '/v1/manuals/nope',
        detail: 'There is no tool named "nope", so it has no manual.',
      },
    });
  });
});

describe('POST /v1/tools/reload', () => {
  it('reports what changed in the folder, and the files that failed', async () => {
    const fresh = path.join(t.toolsDir, 'fresh.ts');
    await writeFile(fresh, toolSource('fresh', 'return "fresh";'));
    const added = t.nextChange((change) => change.name === 'fresh');
    const response = await post('/v1/tools/reload', undefined, ADMIN_KEY);
    expect(response.status).toBe(200);
    const report = await response.json() as Record<string, unknown>;
    await added;
    // The watcher may have reloaded first: then the route's rescan finds the tool unchanged.
    expect([...report['added'] as string[], ...report['unchanged'] as string[]]).toContain('fresh');
    expect(report).toMatchObject({ updated: [], removed: [], errors: [{ file: 'broken.ts' }], durationMs: expect.any(Number) as unknown });
    expect(await (await invoke('fresh', { params: { n: 1 } })).json()).toMatchObject({ ok: true, content: 'fresh' });

    await rm(fresh);
    await post('/v1/tools/reload', undefined, ADMIN_KEY);
    expect((await problemOf(await invoke('fresh', { params: { n: 1 } }))).status).toBe(404);
  });

  it('403 for a key without the admin scope', async () => {
    expect(await problemOf(await post('/v1/tools/reload', undefined, INVOKE_KEY))).toEqual({
      status: 403,
      body: {
        type: 'urn:paddock:problem:forbidden', title: 'Forbidden', status: 403, instance: '/v1/tools/reload',
        detail: 'The key "ci" lacks the "admin" scope this route requires.',
      },
    });
  });
});

describe('OpenAPI document', () => {
  it('describes every tool route with its request schema and every status', async () => {
    const document = await (await t.app.request('/openapi.json')).json() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
      components: { schemas: Record<string, unknown> };
    };
    const statuses = (route: string, method: string) => Object.keys(document.paths[route]?.[method]?.responses ?? {}).sort();
    expect(statuses('/v1/tools', 'get')).toEqual(['200', '401', '403']);
    expect(statuses('/v1/tools/{name}/invoke', 'post')).toEqual(['200', '400', '401', '403', '404', '413', '415', '429']);
    expect(statuses('/v1/tools/{name}', 'put')).toEqual(['200', '201', '400', '401', '403', '409', '413', '415', '422']);
    expect(statuses('/v1/tools/{name}', 'delete')).toEqual(['204', '401', '403', '404']);
    expect(statuses('/v1/tools/reload', 'post')).toEqual(['200', '401', '403']);
    expect(statuses('/v1/exec', 'post')).toEqual(['200', '400', '401', '403', '413', '415', '429']);
    expect(statuses('/v1/manuals/{name}', 'get')).toEqual(['200', '401', '403', '404']);
    expect(Object.keys(document.paths['/v1/tools/{name}/invoke']?.['post']?.responses['200'] as object)).toContain('content');
    expect(document.paths['/v1/tools/{name}/invoke']?.['post']?.responses['200']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/InvokeResult' } }, 'text/event-stream': {} },
    });
    for (const name of ['Tool', 'ToolList', 'InvokeRequest', 'InvokeResult', 'ExecRequest', 'ExecResult', 'WriteToolRequest', 'WriteToolReport', 'ReloadReport', 'PermissionSet']) {
      expect(document.components.schemas).toHaveProperty(name);
    }
  });
});

describe('mounting', () => {
  it('serves no tool routes when the app has no tool system', async () => {
    const { app } = makeTestApp();
    expect((await problemOf(await app.request('/v1/tools', { headers: bearer(INVOKE_KEY) }))).status).toBe(404);
    const document = await (await app.request('/openapi.json')).json() as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).filter((route) => route.startsWith('/v1/tools'))).toEqual([]);
  });
});
