import type { BuiltinTool } from '../../contract.ts';
import type { AgentBridge } from './contract.ts';
import { failed, needsSession, ok } from './shared.ts';

/** reflect: asks the model, as a reviewer with no tools, for a short critique of the session so far. */
export function reflectTool(agent: AgentBridge): BuiltinTool {
  return {
    name: 'reflect',
    description: 'Asks a reviewer (the same model, without tools) for a short, candid critique of this session so far: mistakes, '
      + 'unverified assumptions, wasted steps, what is missing, the best next step. Use it before a final answer on long tasks, or when stuck.',
    kind: 'read',
    mode: 'parallel',
    parameters: {
      type: 'object',
      properties: { focus: { type: 'string', maxLength: 2_000, description: 'What the critique should look at most (optional).' } },
      additionalProperties: false,
    },
    async execute(params, context) {
      if (context.sessionId === null) return needsSession('reflect');
      const { focus } = params as { focus?: string };
      try {
        const critique = await agent.reflect(context.sessionId, focus, context.signal);
        return ok(`Critique of the session so far:\n${critique}`);
      } catch (error) {
        context.signal.throwIfAborted();
        return failed(`The reviewer could not be asked: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  };
}
