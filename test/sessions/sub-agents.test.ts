/**
 * Pins spawn_agent and reflect through the loop: a sub-agent runs blocking in an ephemeral session
 * (only its task as context, its own todo list, at most the parent's tools, spawn_agent gone at the
 * depth limit, its steps capped), its progress shows as tool updates, its answer is the tool result,
 * and its session is removed afterwards; asking for a tool the parent lacks, or spawning where the
 * profile forbids it, is an error result; cancelling the parent cancels the sub-agent's tools.
 * reflect asks the model, without tools, for a critique of the session and returns it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ProfileConfig } from '../../runtime/config/schema.ts';
import { NAP_BODY, userTool } from '../agent/harness.ts';
import { toolResultIn } from '../helpers/fake-openai.ts';
import type { RecordedRequest } from '../helpers/fake-openai.ts';
import { SseReader, startSessionHarness } from './harness.ts';
import type { SessionHarness } from './harness.ts';

const base: ProfileConfig = { tools: { allow: [], deny: [] }, maxSteps: 6, maxContextChars: 400_000, writes: false, stream: true, switchTo: [], maxSpawnDepth: 1 };
let h: SessionHarness;

beforeAll(async () => {
  h = await startSessionHarness({
    stateTools: true,
    userTools: {
      'lookup.ts': userTool('lookup', 'return "found:" + params.text;'),
      'nap_write.ts': userTool('nap_write', NAP_BODY, { permissions: '{ write: ["./out"] }' }),
      'slow.ts': userTool('slow', 'ctx.update("started"); await new Promise((r) => setTimeout(r, 30000)); return "finished";'),
    },
    configure: (config) => {
      config.profiles = { default: base, deep: { ...base, maxSpawnDepth: 2 }, solo: { ...base, maxSpawnDepth: 0 } };
    },
  });
});
afterAll(async () => { await h.close(); });
beforeEach(() => { h.base.fake.reset(); });

const open = async (profile = 'default'): Promise<string> => ((await (await h.post('/v1/sessions', { profile })).json()) as { id: string }).id;
const toolNames = (request: RecordedRequest | undefined) => (request?.body.tools ?? []).map((tool) => tool.function.name);
const ephemeralCount = () => Number(h.store.db.prepare('SELECT COUNT(*) AS n FROM sessions WHERE ephemeral = 1').get()?.['n']);

describe('spawn_agent', () => {
  it('runs a sub-agent on its task alone, with the tools asked for, and returns its answer', async () => {
    h.base.fake.script(
      { toolCalls: [{ id: 'spawn_1', name: 'spawn_agent', arguments: { task: 'Look up delta and report.', tools: ['lookup', 'todo'] } }] },
      { toolCalls: [{ id: 'sub_1', name: 'lookup', arguments: { text: 'delta' } }, { id: 'sub_2', name: 'todo', arguments: { action: 'set', items: [{ content: 'sub item' }] } }] },
      { text: 'Sub-agent says: found:delta.' },
      { text: 'The sub-agent found delta.' },
    );
    const id = await open();
    await h.post(`/v1/sessions/${id}/messages`, { content: 'Delegate it.' }, { headers: { accept: 'text/event-stream' } }).then(async (response) => {
      const events = await new SseReader(response).rest();
      expect(events.filter((event) => event.event === 'tool_update').map((event) => event.data['text'])).toEqual([
        'sub-agent started (2 tools, at most 6 steps)', 'sub-agent calls lookup', 'sub-agent calls todo',
      ]);
      expect(events.at(-1)).toMatchObject({ event: 'done', data: { reason: 'answered', text: 'The sub-agent found delta.' } });
    });
    const [parent, subFirst, subSecond, parentAgain] = h.base.fake.requests;
    expect(toolNames(parent)).toContain('spawn_agent');
    expect(subFirst?.body.messages).toEqual([{ role: 'user', content: 'Look up delta and report.' }]);
    expect(toolNames(subFirst)).toEqual(['todo', 'lookup']);
    expect(toolResultIn(subSecond, 'sub_1')).toBe('found:delta');
    expect(toolResultIn(parentAgain, 'spawn_1')).toBe('Sub-agent says: found:delta.');
    const view = await (await h.request(`/v1/sessions/${id}`)).json() as { todo: unknown[] };
    expect(view.todo).toEqual([]);
    expect(ephemeralCount()).toBe(0);
  });

  it('gives a sub-agent no tool its parent lacks, and no spawn_agent at the depth limit', async () => {
    h.base.fake.script(
      { toolCalls: [{ id: 'wide', name: 'spawn_agent', arguments: { task: 'Write.', tools: ['nap_write'] } }, { id: 'all', name: 'spawn_agent', arguments: { task: 'Anything.' } }] },
      { text: 'nothing to do' },
      { text: 'ok' },
    );
    const id = await open();
    await h.post(`/v1/sessions/${id}/messages`, { content: 'go' });
    const [, sub, parentAgain] = h.base.fake.requests;
    expect(toolResultIn(parentAgain, 'wide')).toMatch(/^Error \(tool_error\): A sub-agent gets no tool its parent lacks: nap_write is not available here\. Available: .*lookup/);
    expect(toolNames(sub)).not.toContain('spawn_agent');
    expect(toolNames(sub)).toContain('lookup');
    expect(toolResultIn(parentAgain, 'all')).toBe('nothing to do');
  });

  it('nests as deep as the profile allows, and not at all where it forbids sub-agents', async () => {
    h.base.fake.script(
      { toolCalls: [{ id: 'd1', name: 'spawn_agent', arguments: { task: 'Go one deeper.' } }] },
      { toolCalls: [{ id: 'd2', name: 'spawn_agent', arguments: { task: 'Deepest.' } }] },
      { text: 'deepest answer' },
      { text: 'middle answer' },
      { text: 'top answer' },
    );
    await h.post(`/v1/sessions/${await open('deep')}/messages`, { content: 'go' });
    const [top, middle, deepest] = h.base.fake.requests;
    expect(toolNames(top)).toContain('spawn_agent');
    expect(toolNames(middle)).toContain('spawn_agent');
    expect(toolNames(deepest)).not.toContain('spawn_agent');
    expect(toolResultIn(h.base.fake.requests[3], 'd2')).toBe('deepest answer');

    h.base.fake.reset();
    h.base.fake.script({ toolCalls: [{ id: 's1', name: 'spawn_agent', arguments: { task: 'x' } }] }, { text: 'ok' });
    await h.post(`/v1/sessions/${await open('solo')}/messages`, { content: 'go' });
    expect(toolResultIn(h.base.fake.requests[1], 's1')).toContain('The profile "solo" does not allow sub-agents.');
  });

  it('caps the sub-agent steps', async () => {
    h.base.fake.script(
      { toolCalls: [{ id: 'cap', name: 'spawn_agent', arguments: { task: 'Loop.', maxSteps: 1 } }] },
      { text: 'partial', toolCalls: [{ id: 'l1', name: 'lookup', arguments: { text: 'a' } }] },
      { text: 'ok' },
    );
    await h.post(`/v1/sessions/${await open()}/messages`, { content: 'go' });
    expect(toolResultIn(h.base.fake.requests[2], 'cap')).toBe('partial\n\n(The sub-agent reached its step limit after 1 steps; its answer may be incomplete.)');
  });

  it('is cancelled with its parent, its running tool aborted and its session removed', async () => {
    h.base.fake.script(
      { toolCalls: [{ id: 'sp', name: 'spawn_agent', arguments: { task: 'Be slow.' } }] },
      { toolCalls: [{ id: 'sl', name: 'slow', arguments: {} }] },
    );
    const id = await open();
    const stream = new SseReader(await h.post(`/v1/sessions/${id}/messages`, { content: 'go' }, { headers: { accept: 'text/event-stream' } }));
    await stream.until('tool_update');
    await stream.until('tool_update');
    expect(await (await h.post(`/v1/sessions/${id}/cancel`, {})).json()).toEqual({ cancelled: true });
    const rest = await stream.rest();
    expect(rest.map((event) => event.event)).toEqual(['tool_result', 'done']);
    expect(rest[0]?.data).toMatchObject({ callId: 'sp', ok: false, error: { kind: 'aborted' } });
    expect(h.base.fake.requests).toHaveLength(2);
    expect(ephemeralCount()).toBe(0);
  });
});

describe('reflect', () => {
  it('asks the model, without tools, for a critique of the session so far', async () => {
    h.base.fake.script(
      { text: 'I will check.', toolCalls: [{ id: 'l1', name: 'lookup', arguments: { text: 'epsilon' } }] },
      { toolCalls: [{ id: 'r1', name: 'reflect', arguments: { focus: 'evidence' } }] },
      { text: '- You never verified epsilon.' },
      { text: 'Verified now.' },
    );
    const id = await open();
    const result = await (await h.post(`/v1/sessions/${id}/messages`, { content: 'Check epsilon.' })).json();
    expect(result).toMatchObject({ text: 'Verified now.' });
    const review = h.base.fake.requests[2]!;
    expect(review.body.stream).toBeFalsy();
    expect(review.body.tools).toBeUndefined();
    expect(review.body.messages[0]).toEqual({ role: 'system', content: expect.stringContaining('Focus on: evidence') });
    expect(review.body.messages[1]?.content).toBe([
      '[user] Check epsilon.',
      '[assistant] I will check.',
      '[assistant calls lookup (l1)] {"text":"epsilon"}',
      '[result of l1] found:epsilon',
    ].join('\n'));
    expect(toolResultIn(h.base.fake.requests[3], 'r1')).toBe('Critique of the session so far:\n- You never verified epsilon.');
  });
});

describe('at the concurrency limit', () => {
  it('a sub-agent\'s calls run in the slot of its spawn_agent call, so nothing waits forever', async () => {
    const tight = await startSessionHarness({
      stateTools: true,
      userTools: { 'lookup.ts': userTool('lookup', 'return "found:" + params.text;') },
      configure: (config) => {
        config.sandbox = { ...config.sandbox, maxConcurrentCalls: 1, maxQueuedCalls: 4 };
        config.profiles = { default: base };
      },
    });
    try {
      tight.base.fake.script(
        { toolCalls: [{ id: 'sp', name: 'spawn_agent', arguments: { task: 'Look up zeta.' } }] },
        { toolCalls: [{ id: 'z1', name: 'lookup', arguments: { text: 'zeta' } }, { id: 'z2', name: 'lookup', arguments: { text: 'eta' } }] },
        { text: 'zeta found' },
        { text: 'done' },
      );
      const { id } = await (await tight.post('/v1/sessions', {})).json() as { id: string };
      const result = await (await tight.post(`/v1/sessions/${id}/messages`, { content: 'go' })).json();
      expect(result).toMatchObject({ status: 'ended', text: 'done' });
      expect(toolResultIn(tight.base.fake.requests[2], 'z2')).toBe('found:eta');
      expect(tight.base.system.coordinator.limiter.running).toBe(0);
    } finally {
      await tight.close();
    }
  });
});
