import type { BuiltinTool } from '../../contract.ts';
import type { AgentBridge } from './contract.ts';
import { failed, needsSession, ok } from './shared.ts';

/** list_profiles and switch_profile: a session may move only to the profiles its own lists in switchTo. */
export function profileTools(agent: AgentBridge): BuiltinTool[] {
  const list: BuiltinTool = {
    name: 'list_profiles',
    description: 'Lists the agent profiles: which one this session uses, and which it may switch to (switch_profile).',
    kind: 'read',
    mode: 'parallel',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute(_params, context) {
      if (context.sessionId === null) return Promise.resolve(needsSession('list_profiles'));
      const profiles = agent.listProfiles(context.sessionId);
      const lines = profiles.map((profile) => {
        const marks = [profile.current ? 'current' : '', profile.switchable ? 'can switch' : '', profile.writes ? 'writes' : 'read-only'].filter((mark) => mark !== '');
        return `- ${profile.name} (${marks.join(', ')}): ${profile.description}`;
      });
      return Promise.resolve(ok(`Profiles:\n${lines.join('\n')}`, { profiles }));
    },
  };

  const switchProfile: BuiltinTool = {
    name: 'switch_profile',
    description: 'Moves this session to another profile (its tools, instructions and model apply from the next step). Only the profiles list_profiles marks "can switch".',
    kind: 'read',
    mode: 'sequential',
    parameters: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 64, description: 'The profile to switch to.' } },
      required: ['name'],
      additionalProperties: false,
    },
    execute(params, context) {
      if (context.sessionId === null) return Promise.resolve(needsSession('switch_profile'));
      const { name } = params as { name: string };
      try {
        const profile = agent.switchProfile(context.sessionId, name);
        return Promise.resolve(ok(`This session now uses the profile "${profile.name}" (${profile.writes ? 'writes open' : 'read-only'}). Its tools apply from your next step.`, { profile: profile.name }));
      } catch (error) {
        return Promise.resolve(failed(error instanceof Error ? error.message : String(error)));
      }
    },
  };

  return [list, switchProfile];
}
