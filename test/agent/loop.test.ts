/**
 * Pins the agent loop end to end over real parts (the openai SDK against the fake server on
 * loopback, the coordinator, a sandbox worker): the model is offered the tools, a user tool's
 * result goes back under its tool_call id until the model answers, streamed or not; parallel-mode
 * calls overlap while sequential-mode ones run one after the other; unknown tools, malformed and
 * invalid arguments come back as error results without anything running; terminate and the step
 * limit stop the loop; a model failure ends the run with an error and leaves the context usable;
 * cancelling aborts a running tool and leaves a consistent context; an image result reaches the
 * model as a synthetic user message only.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../runtime/agent/events.ts';
import type { ContextMessage } from '../../runtime/agent/messages.ts';
import { runTurn } from '../../runtime/agent/run-turn.ts';
import type { RunSettings, StepAdditions } from '../../runtime/agent/run-turn.ts';
import { toolResultIn } from '../helpers/fake-openai.ts';
import { CALLER, NAP_BODY, startHarness, testBuiltin, userTool } from './harness.ts';
import type { Harness } from './harness.ts';

let h: Harness;
let counted = 0;
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

beforeAll(async () => {
  h = await startHarness({
    userTools: {
      'lookup.ts': userTool('lookup', 'return "found:" + params.text;', { description: 'Looks a word up.' }),
      'nap.ts': userTool('nap', NAP_BODY),
      'nap_write.ts': userTool('nap_write', NAP_BODY, { permissions: '{ write: ["./out"] }' }),
      'fail.ts': userTool('fail', 'throw new Error("disk on fire");'),
      'slow.ts': userTool('slow', 'ctx.update("started"); await new Promise((r) => setTimeout(r, 30000)); return "finished";'),
    },
    builtins: [
      testBuiltin('finish', () => Promise.resolve({ content: 'all done', terminate: true })),
      testBuiltin('counter', () => { counted++; return Promise.resolve('counted'); }, {
        parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false },
      }),
      testBuiltin('snapshot', () => Promise.resolve({ content: 'a 1x1 image', metadata: { image: { mediaType: 'image/png', data: PNG }, width: 1 } })),
    ],
  });
});

afterAll(async () => { await h.close(); });

beforeEach(() => {
  h.fake.requests.length = 0;
  h.fake.fallback(undefined);
  counted = 0;
});

interface Run {
  outcome: Awaited<ReturnType<typeof runTurn>>;
  events: AgentEvent[];
  stored: StepAdditions[];
  context: ContextMessage[];
}

async function run(options: { stream?: boolean; maxSteps?: number; maxContextChars?: number; context?: ContextMessage[]; signal?: AbortSignal; onEvent?: (event: AgentEvent) => void } = {}): Promise<Run> {
  const settings: RunSettings = {
    model: 'fake-model', systemPrompt: 'Be brief.', tools: h.system.registry.describeAll(), maxSteps: options.maxSteps ?? 8, stream: options.stream ?? true,
    maxContextChars: options.maxContextChars,
  };
  const events: AgentEvent[] = [];
  const stored: StepAdditions[] = [];
  const start = options.context ?? [{ role: 'user', content: 'Look up paddock.' }];
  const outcome = await runTurn({
    model: h.model, settings: () => settings, context: start,
    invoke: (name, params, call) => h.system.coordinator.invoke(name, { caller: CALLER, params, signal: call.signal, onUpdate: call.onUpdate }),
    signal: options.signal ?? new AbortController().signal,
    onEvent: (event) => { events.push(event); options.onEvent?.(event); },
    onStep: (additions) => { stored.push(additions); },
  });
  return { outcome, events, stored, context: [...start, ...stored.flatMap((additions) => additions.context)] };
}

const types = (events: readonly AgentEvent[]) => events.map((event) => event.type);

describe.each([true, false])('a scripted conversation (model streaming: %s)', (stream) => {
  it('offers the tools, runs a user tool, returns its result under the call id, and finishes', async () => {
    h.fake.script(
      { text: 'Checking.', toolCalls: [{ id: 'call_lookup_1', name: 'lookup', arguments: { text: 'paddock' } }], argumentChunk: 3 },
      { text: 'It is found:paddock.' },
    );
    const { outcome, events, context } = await run({ stream });
    expect(outcome).toEqual({ status: 'ended', reason: 'answered', steps: 2, text: 'It is found:paddock.' });

    const [first, second] = h.fake.requests;
    expect(first?.body.stream === true).toBe(stream);
    expect(first?.body.messages).toEqual([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Look up paddock.' }]);
    expect(first?.body.tools?.find((tool) => tool.function.name === 'lookup')).toEqual({
      type: 'function',
      function: { name: 'lookup', description: 'Looks a word up.', parameters: { type: 'object', properties: { ms: { type: 'number' }, text: { type: 'string' } }, additionalProperties: false } },
    });
    expect(first?.body.tools?.map((tool) => tool.function.name)).toEqual(h.system.registry.describeAll().map((tool) => tool.name));
    expect(toolResultIn(second, 'call_lookup_1')).toBe('found:paddock');
    expect(second?.body.messages[2]).toEqual({
      role: 'assistant', content: 'Checking.',
      tool_calls: [{ id: 'call_lookup_1', type: 'function', function: { name: 'lookup', arguments: '{"text":"paddock"}' } }],
    });

    expect(types(events).filter((type) => type !== 'text-delta')).toEqual(['step-start', 'tool-call-start', 'tool-result', 'step-start', 'run-end']);
    expect(events.filter((event) => event.type === 'text-delta').map((event) => event.text).join('')).toBe('Checking.It is found:paddock.');
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({ result: { callId: 'call_lookup_1', tool: 'lookup', ok: true, content: 'found:paddock', refused: false } });
    expect(context.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });
});

describe('scheduling', () => {
  const intervals = (events: readonly AgentEvent[]) => events.flatMap((event) =>
    event.type === 'tool-result' ? [JSON.parse(event.result.content) as { start: number; end: number }] : []);

  it('runs parallel-mode calls at the same time', async () => {
    h.fake.script({ toolCalls: [{ id: 'p1', name: 'nap', arguments: { ms: 300 } }, { id: 'p2', name: 'nap', arguments: { ms: 300 } }] }, { text: 'ok' });
    const { events } = await run();
    const order = events.flatMap((event) => event.type === 'tool-call-start' ? [`start ${event.callId}`] : event.type === 'tool-result' ? [`end ${event.result.callId}`] : []);
    expect(order.slice(0, 2)).toEqual(['start p1', 'start p2']);
    const [a, b] = intervals(events);
    expect(b!.start).toBeLessThan(a!.end);
    expect(a!.start).toBeLessThan(b!.end);
  });

  it('runs sequential-mode calls one after the other, in order', async () => {
    h.fake.script({ toolCalls: [{ id: 's1', name: 'nap_write', arguments: { ms: 150 } }, { id: 's2', name: 'nap_write', arguments: { ms: 150 } }] }, { text: 'ok' });
    const { events } = await run();
    const order = events.flatMap((event) => event.type === 'tool-call-start' ? [`start ${event.callId}`] : event.type === 'tool-result' ? [`end ${event.result.callId}`] : []);
    expect(order).toEqual(['start s1', 'end s1', 'start s2', 'end s2']);
    const [a, b] = intervals(events);
    expect(b!.start).toBeGreaterThanOrEqual(a!.end);
  });
});

describe('bad tool calls', () => {
  it('come back to the model as error results, and nothing runs', async () => {
    h.fake.script({
      toolCalls: [
        { id: 'u1', name: 'no_such_tool', arguments: {} },
        { id: 'm1', name: 'counter', arguments: '{"n": 1' },
        { id: 'v1', name: 'counter', arguments: { n: 'one', extra: true } },
        { id: 'a1', name: 'counter', arguments: '[1]' },
      ],
    }, { text: 'sorry' });
    const { outcome, events } = await run();
    expect(outcome).toMatchObject({ reason: 'answered' });
    expect(counted).toBe(0);
    const second = h.fake.requests[1];
    expect(toolResultIn(second, 'u1')).toMatch(/^Error \(unknown_tool\): There is no tool named "no_such_tool" in this session\. Available tools: .*counter.*\nCall one of those instead\.$/);
    expect(toolResultIn(second, 'm1')).toMatch(/^Error \(invalid_arguments\): The arguments for "counter" are not a JSON object: .*JSON.*\nSend the arguments again/);
    expect(toolResultIn(second, 'v1')).toBe('Error (invalid_arguments): The arguments for "counter" do not match its schema:\n- /extra is not an allowed property\n- /n must be number\nFix them and call again. The tool did not run.');
    expect(toolResultIn(second, 'a1')).toContain('not a JSON object: found an array');
    // Refusals are reported at once; a call refused by the coordinator reports when its group runs.
    const results = events.flatMap((event) => event.type === 'tool-result' ? [[event.result.callId, event.result.error?.kind, event.result.refused]] : []);
    expect(results.sort()).toEqual([['a1', 'invalid_arguments', true], ['m1', 'invalid_arguments', true], ['u1', 'unknown_tool', true], ['v1', 'invalid_arguments', true]]);
  });

  it('a tool failure goes back with a hint to try another approach', async () => {
    h.fake.script({ toolCalls: [{ id: 'f1', name: 'fail', arguments: {} }] }, { text: 'ok' });
    const { events } = await run();
    expect(toolResultIn(h.fake.requests[1], 'f1')).toMatch(/^Error \(tool_error\): .*disk on fire\nThe tool did not complete\. Fix the arguments or try a different approach\.$/);
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({ result: { ok: false, refused: false, error: { kind: 'tool_error' } } });
  });
});

describe('stopping', () => {
  it('stops when every result of a batch asks to terminate', async () => {
    h.fake.script({ toolCalls: [{ id: 't1', name: 'finish', arguments: {} }, { id: 't2', name: 'finish', arguments: {} }] });
    const { outcome } = await run();
    expect(outcome).toEqual({ status: 'ended', reason: 'terminated', steps: 1, text: '' });
    expect(h.fake.requests).toHaveLength(1);
  });

  it('goes on when only some results terminate', async () => {
    h.fake.script({ toolCalls: [{ id: 't1', name: 'finish', arguments: {} }, { id: 'l1', name: 'lookup', arguments: { text: 'x' } }] }, { text: 'done' });
    expect((await run()).outcome).toMatchObject({ reason: 'answered', steps: 2 });
  });

  it('stops at the step limit', async () => {
    let n = 0;
    h.fake.fallback(() => ({ toolCalls: [{ id: `loop_${++n}`, name: 'lookup', arguments: { text: 'again' } }] }));
    const { outcome, stored } = await run({ maxSteps: 3 });
    expect(outcome).toEqual({ status: 'ended', reason: 'step-limit', steps: 3, text: '' });
    expect(h.fake.requests).toHaveLength(3);
    expect(stored.at(-1)?.display).toEqual([{ type: 'run-end', reason: 'step-limit', steps: 3 }]);
  });
});

describe('a failing model endpoint', () => {
  it('ends the run with an error event, keeps the steps done, and the next run continues from them', async () => {
    h.fake.script({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: { text: 'a' } }] });
    h.fake.fallback(() => ({ error: 500, message: 'upstream down' }));
    const failed = await run();
    expect(failed.outcome).toMatchObject({ status: 'failed', steps: 1, error: { kind: 'server_error' } });
    expect(failed.events.filter((event) => event.type === 'model-retry')).toHaveLength(3);
    expect(failed.events.at(-1)).toMatchObject({ type: 'run-error', error: { kind: 'server_error', message: expect.stringContaining('upstream down') } });
    expect(failed.stored.at(-1)?.display).toEqual([{ type: 'error', kind: 'server_error', message: expect.stringContaining('500') }]);

    h.fake.requests.length = 0;
    h.fake.fallback(undefined);
    h.fake.script({ text: 'back' });
    const context: ContextMessage[] = [...failed.context, { role: 'user', content: 'Try again.' }];
    const retried = await run({ context });
    expect(retried.outcome).toMatchObject({ reason: 'answered', text: 'back' });
    expect(h.fake.requests[0]?.body.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
  });
});

describe('cancellation', () => {
  it('aborts a running tool, and leaves a result for every call', async () => {
    h.fake.script({ text: 'Working.', toolCalls: [{ id: 'slow_1', name: 'slow', arguments: {} }, { id: 'after', name: 'nap_write', arguments: { ms: 1 } }] });
    const controller = new AbortController();
    const started = performance.now();
    const { outcome, events, context } = await run({
      signal: controller.signal,
      onEvent: (event) => { if (event.type === 'tool-update' && event.text === 'started') controller.abort(); },
    });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(outcome).toMatchObject({ status: 'ended', reason: 'cancelled' });
    const results = events.flatMap((event) => event.type === 'tool-result' ? [[event.result.callId, event.result.error?.kind]] : []);
    expect(results).toEqual([['slow_1', 'aborted'], ['after', 'aborted']]);
    expect(context.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(h.fake.requests).toHaveLength(1);
  });

  it('during a streamed answer keeps the text already shown', async () => {
    h.fake.script({ stall: true, text: 'Half an ans' });
    const controller = new AbortController();
    const { outcome, context } = await run({ signal: controller.signal, onEvent: (event) => { if (event.type === 'text-delta') controller.abort(); } });
    expect(outcome).toMatchObject({ reason: 'cancelled', text: 'Half an ans' });
    expect(context.at(-1)).toEqual({ role: 'assistant', content: 'Half an ans' });
  });
});

describe('images', () => {
  it('reach the model context as a synthetic user message, and only their type is shown', async () => {
    h.fake.script({ toolCalls: [{ id: 'img_1', name: 'snapshot', arguments: {} }] }, { text: 'A dot.' });
    const { events, stored } = await run();
    const second = h.fake.requests[1]!;
    expect(second.body.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'img_1', content: 'a 1x1 image' },
      { role: 'user', content: [{ type: 'text', text: 'The image returned by snapshot (call img_1):' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
    ]);
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({ result: { images: ['image/png'], metadata: { width: 1 } } });
    expect(JSON.stringify(events)).not.toContain(PNG);
    expect(JSON.stringify(stored.flatMap((additions) => additions.display))).not.toContain(PNG);
  });
});

describe('a context over the window', () => {
  it('sends the model its newest part after a note, while the session keeps it whole', async () => {
    const history: ContextMessage[] = [];
    for (let index = 0; index < 30; index++) {
      history.push({ role: 'user', content: `question ${index} ${'q'.repeat(200)}` }, { role: 'assistant', content: `answer ${index} ${'a'.repeat(200)}` });
    }
    history.push({ role: 'user', content: 'Look up paddock.' });
    h.fake.script(
      { toolCalls: [{ id: 'call_window_1', name: 'lookup', arguments: { text: 'paddock' } }] },
      { text: 'Found.' },
    );
    const { outcome, context } = await run({ context: history, maxContextChars: 2_000 });
    expect(outcome).toMatchObject({ status: 'ended', reason: 'answered' });
    const [first, second] = h.fake.requests.map((request) => request.body.messages);
    expect(first?.[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(first?.[1]?.content).toMatch(/^\[5\d earlier messages were left out of this request to fit the context window/);
    expect(first?.at(-1)).toEqual({ role: 'user', content: 'Look up paddock.' });
    expect(JSON.stringify(first).length).toBeLessThan(4_000);
    // The second request ends with the call and its result, together.
    expect(second?.slice(-2).map((message) => message.role)).toEqual(['assistant', 'tool']);
    expect(context.slice(0, history.length)).toEqual(history);
  });
});
