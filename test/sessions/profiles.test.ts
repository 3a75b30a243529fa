/**
 * Pins profiles (SPEC §6): a session starts with the read-only view (tools of kind read, those its
 * profile allows, and those tools/enabled.json adds to every profile) unless its profile opens
 * writes; a deny list wins over everything; a tool outside the view is refused as unknown without
 * running; the profile's model, system prompt and step limit are used; its grant policy narrows
 * the caller's own (never widens it).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ProfileConfig } from '../../runtime/config/schema.ts';
import { toolView } from '../../runtime/profiles/profiles.ts';
import type { Profile } from '../../runtime/profiles/profiles.ts';
import type { ToolDescription } from '../../runtime/tools/contract.ts';
import { NAP_BODY, userTool } from '../agent/harness.ts';
import { toolResultIn } from '../helpers/fake-openai.ts';
import { startSessionHarness } from './harness.ts';
import type { SessionHarness } from './harness.ts';

const base: ProfileConfig = { tools: { allow: [], deny: [] }, maxSteps: 25, maxContextChars: 400_000, writes: false, stream: true, switchTo: [], maxSpawnDepth: 1 };

describe('toolView', () => {
  const tool = (name: string, kind: ToolDescription['kind']): ToolDescription =>
    ({ name, kind, description: '', parameters: {}, mode: 'parallel', source: 'builtin', permissions: {} });
  const tools = [tool('read_a', 'read'), tool('write_b', 'write'), tool('web_c', 'web'), tool('exec_d', 'execute')];
  const profile = (changes: Partial<Profile>): Profile => ({
    name: 'p', description: '', model: 'm', systemPrompt: undefined, allow: [], deny: [], policy: undefined, maxSteps: 5, maxContextChars: 400_000,
    writes: false, stream: true, switchTo: [], maxSpawnDepth: 1, ...changes,
  });
  const names = (view: ToolDescription[]) => view.map((item) => item.name);

  it('is read-only by default, plus what the profile and enabled.json allow', () => {
    expect(names(toolView(profile({}), tools))).toEqual(['read_a']);
    expect(names(toolView(profile({ allow: ['web_c'] }), tools, { enabled: ['exec_d'] }))).toEqual(['read_a', 'web_c', 'exec_d']);
  });

  it('opens every kind with writes, and deny and a sub-agent limit always narrow', () => {
    expect(names(toolView(profile({ writes: true }), tools))).toEqual(['read_a', 'write_b', 'web_c', 'exec_d']);
    expect(names(toolView(profile({ writes: true, deny: ['web_c'] }), tools, { enabled: ['web_c'] }))).toEqual(['read_a', 'write_b', 'exec_d']);
    expect(names(toolView(profile({ writes: true }), tools, { limit: ['write_b', 'nope'] }))).toEqual(['write_b']);
  });
});

describe('sessions by profile', () => {
  let h: SessionHarness;

  beforeAll(async () => {
    h = await startSessionHarness({
      userTools: {
        'lookup.ts': userTool('lookup', 'return "found:" + params.text;'),
        'nap_write.ts': userTool('nap_write', NAP_BODY, { permissions: '{ write: ["./out"] }' }),
        'fetcher.ts': userTool('fetcher', 'try { const r = await fetch(params.text ?? ""); return "status " + r.status; } catch (e) { return (e as Error).name + ": " + (e as Error).message; }', { permissions: '{ net: ["127.0.0.1"] }' }),
        'enabled.json': '["fetcher"]',
      },
      configure: (config) => {
        config.policies = { default: { net: ['127.0.0.1'] }, none: {} };
        config.profiles = {
          default: base,
          writer: { ...base, writes: true, model: 'writer-model', systemPrompt: 'You write.', tools: { allow: [], deny: ['lookup'] }, maxSteps: 2 },
          narrow: { ...base, policy: 'none' },
        };
      },
    });
  });
  afterAll(async () => { await h.close(); });
  beforeEach(() => { h.base.fake.reset(); });

  const open = async (profile: string): Promise<string> => ((await (await h.post('/v1/sessions', { profile })).json()) as { id: string }).id;
  const toolsOf = async (id: string): Promise<string[]> => ((await (await h.request(`/v1/sessions/${id}`)).json()) as { tools: string[] }).tools;

  it('start read-only unless the profile opens writes', async () => {
    expect(await toolsOf(await open('default'))).toEqual(['fetcher', 'lookup']);
    expect(await toolsOf(await open('writer'))).toEqual(['fetcher', 'nap_write']);
  });

  it('refuse a call to a tool outside the view, without running it', async () => {
    h.base.fake.script({ toolCalls: [{ id: 'w1', name: 'nap_write', arguments: { ms: 1 } }] }, { text: 'ok' });
    const id = await open('default');
    const result = await (await h.post(`/v1/sessions/${id}/messages`, { content: 'write' })).json() as { toolCalls: unknown[] };
    expect(result.toolCalls).toEqual([expect.objectContaining({ callId: 'w1', ok: false, refused: true, error: { kind: 'unknown_tool', message: 'There is no tool named "nap_write" in this session.' } })]);
    expect(h.base.fake.requests[0]?.body.tools?.map((tool) => tool.function.name)).toEqual(['fetcher', 'lookup']);
  });

  it('use the profile model, system prompt and step limit', async () => {
    h.base.fake.fallback(() => ({ toolCalls: [{ id: `n${h.base.fake.requests.length}`, name: 'nap_write', arguments: { ms: 1 } }] }));
    const id = await open('writer');
    const result = await (await h.post(`/v1/sessions/${id}/messages`, { content: 'go' })).json();
    expect(result).toMatchObject({ status: 'ended', reason: 'step-limit', steps: 2 });
    expect(h.base.fake.requests).toHaveLength(2);
    expect(h.base.fake.requests[0]?.body).toMatchObject({ model: 'writer-model', messages: [{ role: 'system', content: 'You write.' }, { role: 'user', content: 'go' }] });
    expect(toolResultIn(h.base.fake.requests[1], 'n1')).toMatch(/^\{"start":\d+,"end":\d+\}$/);
  });

  it('narrow the caller policy with the profile policy', async () => {
    const target = `${h.base.fake.url}/models`;
    for (const [profile, expected] of [['default', 'status 404'], ['narrow', `NotCapable: Requires net access to "${new URL(target).host}", run again with the --allow-net flag`]] as const) {
      h.base.fake.reset();
      h.base.fake.script({ toolCalls: [{ id: 'f1', name: 'fetcher', arguments: { text: target } }] }, { text: 'ok' });
      const id = await open(profile);
      await h.post(`/v1/sessions/${id}/messages`, { content: 'fetch' });
      const modelCalls = h.base.fake.requests.filter((request) => request.path === '/v1/chat/completions');
      expect(toolResultIn(modelCalls[1], 'f1')).toBe(expected);
    }
  });
});
