/**
 * Pins: the store in the data folder keeps sessions, both buffers, todo lists, scratchpads and
 * memory across a reopen; deleting a session removes its state and sub-agent sessions; memory is
 * scoped per profile and searched by full text, ranked, with FTS syntax in the query taken as text.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ContextMessage } from '../../runtime/agent/messages.ts';
import { ftsQuery } from '../../runtime/sessions/memory-store.ts';
import { openStore } from '../../runtime/sessions/store.ts';
import type { Store } from '../../runtime/sessions/store.ts';
import { tempDir } from '../helpers/temp.ts';

async function freshStore(): Promise<{ store: Store; dataDir: string }> {
  const dataDir = await tempDir();
  const store = openStore(dataDir);
  onTestFinished(() => { store.close(); });
  return { store, dataDir };
}

describe('sessions and buffers', () => {
  it('keep everything across a reopen, in order', async () => {
    const { store, dataDir } = await freshStore();
    const session = store.sessions.create({ owner: 'ci', profile: 'default' });
    expect(session).toMatchObject({ owner: 'ci', profile: 'default', parentId: null, depth: 0, ephemeral: false, toolLimit: null });
    expect(session.id).toMatch(/^ses_[0-9a-f]{32}$/);
    const context: ContextMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'echo', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
    ];
    store.sessions.append(session.id, { display: [{ type: 'user', content: 'hi' }], context: context.slice(0, 1) });
    store.sessions.append(session.id, { display: [{ type: 'tool-call', callId: 'call_1', tool: 'echo', arguments: '{}' }], context: context.slice(1) });
    store.state.setTodos(session.id, [{ content: 'one', status: 'pending' }, { content: 'two', status: 'in_progress' }]);
    store.state.writeSection(session.id, 'plan', 'step 1');
    store.memory.save('default', 'The deploy key lives in vault', ['deploy']);
    store.close();

    const reopened = openStore(dataDir);
    onTestFinished(() => { reopened.close(); });
    expect(reopened.sessions.get(session.id)).toEqual({ ...session, updatedAt: expect.any(String) });
    expect(reopened.sessions.context(session.id)).toEqual(context);
    expect(reopened.sessions.display(session.id).map((item) => [item.seq, item.entry.type])).toEqual([[1, 'user'], [2, 'tool-call']]);
    expect(reopened.sessions.display(session.id, 1).map((item) => item.seq)).toEqual([2]);
    expect(reopened.state.todos(session.id).map((item) => [item.id, item.status])).toEqual([[1, 'pending'], [2, 'in_progress']]);
    expect(reopened.state.sections(session.id)).toMatchObject([{ name: 'plan', content: 'step 1' }]);
    expect(reopened.memory.search('default', 'deploy', 5).map((hit) => hit.content)).toEqual(['The deploy key lives in vault']);
  });

  it('delete a session with its state and its sub-agent sessions', async () => {
    const { store } = await freshStore();
    const parent = store.sessions.create({ owner: 'ci', profile: 'default' });
    const child = store.sessions.create({ owner: 'ci', profile: 'default', parentId: parent.id, depth: 1, ephemeral: true, toolLimit: ['echo'] });
    expect(child).toMatchObject({ parentId: parent.id, depth: 1, ephemeral: true, toolLimit: ['echo'] });
    store.state.setTodos(child.id, [{ content: 'x', status: 'pending' }]);
    store.state.writeSection(parent.id, 'notes', 'n');
    store.sessions.append(parent.id, { display: [{ type: 'user', content: 'hi' }], context: [{ role: 'user', content: 'hi' }] });
    expect(store.sessions.delete(parent.id)).toBe(true);
    expect(store.sessions.get(child.id)).toBeUndefined();
    expect(store.state.todos(child.id)).toEqual([]);
    expect(store.state.sections(parent.id)).toEqual([]);
    expect(store.sessions.context(parent.id)).toEqual([]);
    expect(store.sessions.delete(parent.id)).toBe(false);
  });

  it('list the caller own sessions newest first, never ephemeral ones', async () => {
    const { store } = await freshStore();
    const first = store.sessions.create({ owner: 'ci', profile: 'default' });
    const second = store.sessions.create({ owner: 'ci', profile: 'default' });
    store.sessions.create({ owner: 'other', profile: 'default' });
    store.sessions.create({ owner: 'ci', profile: 'default', parentId: first.id, depth: 1, ephemeral: true });
    store.sessions.append(first.id, { display: [{ type: 'user', content: 'later' }] });
    expect(store.sessions.list('ci').map((session) => session.id)).toEqual([first.id, second.id]);
    expect(store.sessions.list(undefined)).toHaveLength(3);
  });

  it('remove ephemeral sessions a crash left behind when the store opens', async () => {
    const { store, dataDir } = await freshStore();
    const parent = store.sessions.create({ owner: 'ci', profile: 'default' });
    const child = store.sessions.create({ owner: 'ci', profile: 'default', parentId: parent.id, depth: 1, ephemeral: true });
    store.close();
    const reopened = openStore(dataDir);
    onTestFinished(() => { reopened.close(); });
    expect(reopened.sessions.get(child.id)).toBeUndefined();
    expect(reopened.sessions.get(parent.id)).toBeDefined();
  });
});

describe('todo and scratchpad', () => {
  it('replace the list, update one item, and refuse an unknown status', async () => {
    const { store } = await freshStore();
    const { id } = store.sessions.create({ owner: 'ci', profile: 'default' });
    store.state.setTodos(id, [{ content: 'a', status: 'pending' }, { content: 'b', status: 'pending' }]);
    expect(store.state.updateTodo(id, 2, { status: 'done', note: 'finished early' })).toEqual({ id: 2, content: 'b', status: 'done', note: 'finished early' });
    expect(store.state.updateTodo(id, 9, { status: 'done' })).toBeUndefined();
    expect(store.state.setTodos(id, [{ content: 'c', status: 'skipped' }])).toEqual([{ id: 1, content: 'c', status: 'skipped', note: null }]);
    expect(() => store.state.setTodos(id, [{ content: 'd', status: 'later' as 'done' }])).toThrow(/CHECK constraint/);
    expect(store.state.todos(id)).toEqual([{ id: 1, content: 'c', status: 'skipped', note: null }]);
  });

  it('write, append and clear named sections', async () => {
    const { store } = await freshStore();
    const { id } = store.sessions.create({ owner: 'ci', profile: 'default' });
    store.state.writeSection(id, 'b', 'first');
    expect(store.state.appendSection(id, 'b', 'second').content).toBe('first\nsecond');
    expect(store.state.appendSection(id, 'a', 'new').content).toBe('new');
    expect(store.state.sections(id).map((section) => section.name)).toEqual(['a', 'b']);
    expect(store.state.clearSections(id, 'a')).toBe(1);
    expect(store.state.clearSections(id, 'a')).toBe(0);
    expect(store.state.clearSections(id)).toBe(1);
    expect(store.state.sections(id)).toEqual([]);
  });
});

describe('memory', () => {
  it('ranks the best match first and keeps each profile to its own memories', async () => {
    const { store } = await freshStore();
    store.memory.save('default', 'Invoices are exported every Monday.', ['billing']);
    const best = store.memory.save('default', 'Invoice numbers: the invoice prefix is INV and invoices are numbered yearly.', ['invoice']);
    store.memory.save('default', 'The staging server is staging.example.com.', []);
    store.memory.save('other', 'Invoice secrets of another profile.', ['invoice']);
    const hits = store.memory.search('default', 'invoice prefix', 10);
    expect(hits.map((hit) => hit.id)[0]).toBe(best.id);
    expect(hits.map((hit) => hit.content)).not.toContain('Invoice secrets of another profile.');
    expect(hits[0]?.snippet).toContain('[prefix]');
    expect(store.memory.count('default')).toBe(3);
  });

  it('takes FTS syntax in a query as plain words', async () => {
    const { store } = await freshStore();
    store.memory.save('default', 'Use NEAR-line storage for backups.', []);
    expect(ftsQuery('a AND "b" OR c* NEAR(d)')).toBe('"a"* OR "and"* OR "b"* OR "or"* OR "c"* OR "near"* OR "d"*');
    expect(ftsQuery('  "*" ')).toBeUndefined();
    expect(store.memory.search('default', 'NEAR(', 5)).toHaveLength(1);
    expect(store.memory.search('default', '"', 5)).toEqual([]);
  });

  it('forgets a memory only in its own scope', async () => {
    const { store } = await freshStore();
    const saved = store.memory.save('default', 'temporary fact', []);
    expect(store.memory.forget('other', saved.id)).toBe(false);
    expect(store.memory.forget('default', saved.id)).toBe(true);
    expect(store.memory.search('default', 'temporary', 5)).toEqual([]);
  });
});
