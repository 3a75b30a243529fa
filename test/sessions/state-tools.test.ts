/**
 * Pins the state tools as the model uses them through the loop: todo (set / update / read, the five
 * statuses) and scratchpad (write / append / read / clear) per session, shown by GET; memory saved,
 * searched (ranked) and forgotten per profile, with saving closed to read-only sessions unless the
 * profile allows it; list_profiles and switch_profile limited to the profile's switchTo, the new
 * tools offered from the next step; without a session every state tool answers an error result.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ProfileConfig } from '../../runtime/config/schema.ts';
import { CALLER } from '../agent/harness.ts';
import type { FakeToolCall } from '../helpers/fake-openai.ts';
import { toolResultIn } from '../helpers/fake-openai.ts';
import { startSessionHarness } from './harness.ts';
import type { SessionHarness } from './harness.ts';

const base: ProfileConfig = { tools: { allow: [], deny: [] }, maxSteps: 25, maxContextChars: 400_000, writes: false, stream: true, switchTo: [], maxSpawnDepth: 1 };
let h: SessionHarness;

beforeAll(async () => {
  h = await startSessionHarness({
    stateTools: true,
    configure: (config) => {
      config.profiles = {
        default: { ...base, switchTo: ['keeper'] },
        keeper: { ...base, description: 'Keeps memories.', tools: { allow: ['memory_save', 'memory_forget'], deny: [] } },
        other: { ...base, tools: { allow: ['memory_save'], deny: [] } },
      };
    },
  });
});
afterAll(async () => { await h.close(); });
beforeEach(() => { h.base.fake.reset(); });

const open = async (profile = 'default'): Promise<string> => ((await (await h.post('/v1/sessions', { profile })).json()) as { id: string }).id;

/** Runs one message in which the model makes `calls` (one step each), then answers; returns each call's tool message. */
async function calls(id: string, ...steps: FakeToolCall[][]): Promise<Record<string, string | undefined>> {
  h.base.fake.script(...steps.map((toolCalls) => ({ toolCalls })), { text: 'done' });
  const response = await h.post(`/v1/sessions/${id}/messages`, { content: 'go' });
  expect(response.status).toBe(200);
  const last = h.base.fake.requests.at(-1);
  return Object.fromEntries(steps.flat().map((call) => [call.id, toolResultIn(last, call.id)]));
}

describe('todo', () => {
  it('sets, updates and reads the list, shown by GET', async () => {
    const id = await open();
    const results = await calls(id,
      [{ id: 't1', name: 'todo', arguments: { action: 'set', items: [{ content: 'Read the spec' }, { content: 'Write code', status: 'in_progress' }, { content: 'Test' }] } }],
      [{ id: 't2', name: 'todo', arguments: { action: 'update', id: 1, status: 'done', note: 'two sections' } }],
      [{ id: 't3', name: 'todo', arguments: { action: 'update', id: 9, status: 'done' } }, { id: 't4', name: 'todo', arguments: { action: 'update', id: 3, status: 'later' } }],
      [{ id: 't5', name: 'todo', arguments: { action: 'read' } }],
    );
    expect(results['t1']).toBe('Todo (0 of 3 done):\n1. [ ] Read the spec (pending)\n2. [>] Write code (in_progress)\n3. [ ] Test (pending)');
    expect(results['t3']).toBe('Error (tool_error): There is no item 9; the list has items 1 to 3.\nThe tool did not complete. Fix the arguments or try a different approach.');
    expect(results['t4']).toContain('Error (invalid_arguments)');
    expect(results['t5']).toBe('Todo (1 of 3 done):\n1. [x] Read the spec (done) — two sections\n2. [>] Write code (in_progress)\n3. [ ] Test (pending)');
    const view = await (await h.request(`/v1/sessions/${id}`)).json() as { todo: unknown[] };
    expect(view.todo).toEqual([
      { id: 1, content: 'Read the spec', status: 'done', note: 'two sections' },
      { id: 2, content: 'Write code', status: 'in_progress', note: null },
      { id: 3, content: 'Test', status: 'pending', note: null },
    ]);
  });
});

describe('scratchpad', () => {
  it('writes, appends, reads and clears named sections', async () => {
    const id = await open();
    const results = await calls(id,
      [{ id: 's1', name: 'scratchpad', arguments: { action: 'write', section: 'plan', content: 'step one' } }],
      [{ id: 's2', name: 'scratchpad', arguments: { action: 'append', section: 'plan', content: 'step two' } }, { id: 's3', name: 'scratchpad', arguments: { action: 'write', section: 'facts', content: 'x=1' } }],
      [{ id: 's4', name: 'scratchpad', arguments: { action: 'read', section: 'plan' } }, { id: 's5', name: 'scratchpad', arguments: { action: 'read', section: 'nope' } }],
      [{ id: 's6', name: 'scratchpad', arguments: { action: 'clear', section: 'facts' } }, { id: 's7', name: 'scratchpad', arguments: { action: 'read' } }],
    );
    expect(results['s2']).toBe('Section "plan" now holds 17 characters.');
    expect(results['s4']).toBe('step one\nstep two');
    expect(results['s5']).toContain('There is no section "nope". Sections: "facts", "plan".');
    expect(results['s6']).toBe('Cleared section "facts".');
    expect(results['s7']).toBe('## plan\nstep one\nstep two');
    const view = await (await h.request(`/v1/sessions/${id}`)).json() as { scratchpad: unknown[] };
    expect(view.scratchpad).toEqual([{ name: 'plan', content: 'step one\nstep two', updatedAt: expect.any(String) }]);
  });
});

describe('memory', () => {
  it('is saved, found best first and forgotten within one profile', async () => {
    const id = await open('keeper');
    const saved = await calls(id,
      [{ id: 'm1', name: 'memory_save', arguments: { content: 'Invoices are exported on Mondays.', tags: ['billing'] } }],
      [{ id: 'm2', name: 'memory_save', arguments: { content: 'The invoice prefix is INV and invoice numbers restart each year.', tags: ['invoice'] } }],
    );
    expect(saved['m1']).toMatch(/^Saved memory #\d+\.$/);
    const second = Number(/#(\d+)/.exec(saved['m2'] ?? '')?.[1]);
    const found = await calls(await open('keeper'), [{ id: 'q1', name: 'memory_search', arguments: { query: 'invoice prefix' } }]);
    expect(found['q1']).toMatch(new RegExp(`^2 memories, best first:\\n#${second} \\[invoice\\] \\(\\d{4}-\\d\\d-\\d\\d\\): The invoice prefix`));
    const elsewhere = await calls(await open('other'), [{ id: 'q2', name: 'memory_search', arguments: { query: 'invoice' } }]);
    expect(elsewhere['q2']).toBe('No memory matches "invoice".');
    const forgot = await calls(id, [{ id: 'f1', name: 'memory_forget', arguments: { id: second } }], [{ id: 'f2', name: 'memory_forget', arguments: { id: second } }]);
    expect(forgot['f1']).toBe(`Forgot memory #${second}.`);
    expect(forgot['f2']).toContain(`There is no memory #${second} for this profile.`);
  });

  it('cannot be saved from a read-only session unless its profile allows it', async () => {
    const id = await open('default');
    const tools = ((await (await h.request(`/v1/sessions/${id}`)).json()) as { tools: string[] }).tools;
    expect(tools).toEqual(['list_profiles', 'memory_search', 'reflect', 'scratchpad', 'spawn_agent', 'switch_profile', 'todo']);
    const results = await calls(id, [{ id: 'x1', name: 'memory_save', arguments: { content: 'plant this' } }]);
    expect(results['x1']).toMatch(/^Error \(unknown_tool\)/);
  });
});

describe('profiles', () => {
  it('lists them and switches only where switchTo allows, the new tools from the next step', async () => {
    const id = await open('default');
    const results = await calls(id,
      [{ id: 'p1', name: 'list_profiles', arguments: {} }],
      [{ id: 'p2', name: 'switch_profile', arguments: { name: 'other' } }],
      [{ id: 'p3', name: 'switch_profile', arguments: { name: 'keeper' } }],
      [{ id: 'p4', name: 'memory_save', arguments: { content: 'saved after switching' } }],
    );
    expect(results['p1']).toBe([
      'Profiles:',
      '- default (current, read-only): Read-only tools.',
      '- keeper (can switch, read-only): Keeps memories.',
      '- other (read-only): Read-only tools.',
    ].join('\n'));
    expect(results['p2']).toContain('The profile "default" may not switch to "other"; it may switch to: keeper.');
    expect(results['p3']).toBe('This session now uses the profile "keeper" (read-only). Its tools apply from your next step.');
    expect(results['p4']).toMatch(/^Saved memory #\d+\.$/);
    const offered = h.base.fake.requests.map((request) => (request.body.tools ?? []).some((tool) => tool.function.name === 'memory_save'));
    expect(offered).toEqual([false, false, false, true, true]);
    expect(((await (await h.request(`/v1/sessions/${id}`)).json()) as { profile: string }).profile).toBe('keeper');
  });
});

describe('outside a session', () => {
  it('every state tool answers an error result', async () => {
    for (const [name, params] of [['todo', { action: 'read' }], ['scratchpad', { action: 'read' }], ['memory_search', { query: 'x' }], ['list_profiles', {}]] as const) {
      const result = await h.base.system.coordinator.invoke(name, { caller: CALLER, params });
      expect(result).toMatchObject({ ok: false, error: { kind: 'tool_error', message: `${name} works only inside a session (POST /v1/sessions/{id}/messages); this call has no session.` } });
    }
  });
});
