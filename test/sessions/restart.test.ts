/**
 * Pins: a restart of the server loses nothing: sessions with their display history and model
 * context, their todo list and scratchpad, and the profile's memories come back from the data
 * folder, and the next message continues the same conversation.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import type { Config } from '../../runtime/config/schema.ts';
import { userTool } from '../agent/harness.ts';
import { toolResultIn } from '../helpers/fake-openai.ts';
import { startSessionHarness } from './harness.ts';
import type { SessionHarnessOptions } from './harness.ts';

const options = (dir: string): SessionHarnessOptions => ({
  dir,
  userTools: { 'lookup.ts': userTool('lookup', 'return "found:" + params.text;') },
  stateTools: true,
  configure: (config: Config) => {
    config.profiles['default'] = { tools: { allow: ['memory_save'], deny: [] }, maxSteps: 25, maxContextChars: 400_000, writes: false, stream: true, switchTo: [], maxSpawnDepth: 1 };
  },
});

it('keeps sessions, their history, context, todo, scratchpad and memory across a restart', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'paddock-restart-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));

  const first = await startSessionHarness(options(dir));
  first.base.fake.script({
    toolCalls: [
      { id: 'call_r1', name: 'lookup', arguments: { text: 'before' } },
      { id: 'call_t1', name: 'todo', arguments: { action: 'set', items: [{ content: 'Survive a restart', status: 'in_progress' }] } },
      { id: 'call_s1', name: 'scratchpad', arguments: { action: 'write', section: 'notes', content: 'kept on disk' } },
      { id: 'call_m1', name: 'memory_save', arguments: { content: 'The restart drill passed.', tags: ['drill'] } },
    ],
  }, { text: 'Found before.' });
  const { id } = await (await first.post('/v1/sessions', {})).json() as { id: string };
  expect((await first.post(`/v1/sessions/${id}/messages`, { content: 'Look up before.' })).status).toBe(200);
  const before = await (await first.request(`/v1/sessions/${id}`)).json() as Record<string, unknown>;
  await first.close();

  const second = await startSessionHarness(options(dir));
  onTestFinished(() => second.close());
  const after = await (await second.request(`/v1/sessions/${id}`)).json() as Record<string, unknown>;
  expect(after).toEqual(before);
  expect(after).toMatchObject({
    todo: [{ id: 1, content: 'Survive a restart', status: 'in_progress', note: null }],
    scratchpad: [{ name: 'notes', content: 'kept on disk' }],
  });
  expect((await (await second.request('/v1/sessions')).json() as { sessions: { id: string }[] }).sessions.map((item) => item.id)).toEqual([id]);

  second.base.fake.script({ text: 'Still here.' });
  const reply = await second.post(`/v1/sessions/${id}/messages`, { content: 'Are you there?' });
  expect(await reply.json()).toMatchObject({ status: 'ended', text: 'Still here.' });
  const messages = second.base.fake.requests[0]?.body.messages ?? [];
  expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'tool', 'assistant', 'user']);
  expect(messages[1]?.tool_calls?.map((call) => call.id)).toEqual(['call_r1', 'call_t1', 'call_s1', 'call_m1']);
  expect(toolResultIn(second.base.fake.requests[0], 'call_r1')).toBe('found:before');

  second.base.fake.script({ toolCalls: [{ id: 'call_q1', name: 'memory_search', arguments: { query: 'drill' } }] }, { text: 'ok' });
  const { id: fresh } = await (await second.post('/v1/sessions', {})).json() as { id: string };
  await second.post(`/v1/sessions/${fresh}/messages`, { content: 'What do you remember?' });
  expect(toolResultIn(second.base.fake.requests.at(-1), 'call_q1')).toMatch(/^1 memory, best first:\n#1 \[drill\] \(\d{4}-\d\d-\d\d\): The restart drill passed\.$/);
});
