/**
 * Pins: a restart of the server loses nothing: sessions with their display history and model
 * context come back from the data folder, and the next message continues the same conversation.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { userTool } from '../agent/harness.ts';
import { startSessionHarness } from './harness.ts';

const TOOLS = { 'lookup.ts': userTool('lookup', 'return "found:" + params.text;') };

it('keeps sessions, their history and their context across a restart', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'paddock-restart-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));

  const first = await startSessionHarness({ dir, userTools: TOOLS });
  first.base.fake.script({ toolCalls: [{ id: 'call_r1', name: 'lookup', arguments: { text: 'before' } }] }, { text: 'Found before.' });
  const { id } = await (await first.post('/v1/sessions', {})).json() as { id: string };
  expect((await first.post(`/v1/sessions/${id}/messages`, { content: 'Look up before.' })).status).toBe(200);
  const before = await (await first.request(`/v1/sessions/${id}`)).json() as Record<string, unknown>;
  await first.close();

  const second = await startSessionHarness({ dir, userTools: TOOLS });
  onTestFinished(() => second.close());
  const after = await (await second.request(`/v1/sessions/${id}`)).json() as Record<string, unknown>;
  expect(after).toEqual(before);
  expect((await (await second.request('/v1/sessions')).json() as { sessions: { id: string }[] }).sessions.map((item) => item.id)).toEqual([id]);

  second.base.fake.script({ text: 'Still here.' });
  const reply = await second.post(`/v1/sessions/${id}/messages`, { content: 'Are you there?' });
  expect(await reply.json()).toMatchObject({ status: 'ended', text: 'Still here.' });
  const messages = second.base.fake.requests[0]?.body.messages ?? [];
  expect(messages.map((message) => [message.role, message.content])).toEqual([
    ['user', 'Look up before.'],
    ['assistant', null],
    ['tool', 'found:before'],
    ['assistant', 'Found before.'],
    ['user', 'Are you there?'],
  ]);
  expect(messages[1]?.tool_calls?.[0]).toMatchObject({ id: 'call_r1', function: { name: 'lookup' } });
});
