import type { BuiltinTool } from '../../contract.ts';
import type { AgentBridge } from './contract.ts';
import { failed, needsSession, ok } from './shared.ts';

export const MAX_TASK_CHARS = 20_000;

/**
 * spawn_agent: a blocking sub-run in an ephemeral session with its own todo list and scratchpad.
 * Its tools are never wider than the parent's, its steps never more than the parent profile's, and
 * nesting stops at the profile's depth; cancelling the parent cancels it.
 */
export function spawnAgentTool(agent: AgentBridge): BuiltinTool {
  return {
    name: 'spawn_agent',
    description: 'Hands a self-contained sub-task to a sub-agent and waits for its answer. The sub-agent starts with an empty conversation '
      + '(only your task text), its own todo list and scratchpad, and at most your tools. Use it for a side investigation whose details '
      + 'would clutter this conversation; give it everything it needs in `task`.',
    kind: 'read',
    mode: 'parallel',
    parameters: {
      type: 'object',
      properties: {
        task: { type: 'string', minLength: 1, maxLength: MAX_TASK_CHARS, description: 'The complete task: goal, context, what to return.' },
        tools: {
          type: 'array', uniqueItems: true, maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 64 },
          description: 'Limit the sub-agent to these of your tools (default: all of yours).',
        },
        maxSteps: { type: 'integer', minimum: 1, maximum: 1000, description: 'Model calls the sub-agent may make (capped by your profile\'s step limit).' },
      },
      required: ['task'],
      additionalProperties: false,
    },
    async execute(params, context) {
      if (context.sessionId === null) return needsSession('spawn_agent');
      const request = params as { task: string; tools?: string[]; maxSteps?: number };
      try {
        const outcome = await agent.spawnSubAgent(context.sessionId, request, context.signal, (text) => { context.update(text); });
        const metadata = { reason: outcome.reason, steps: outcome.steps, toolCalls: outcome.toolCalls };
        if (outcome.reason === 'cancelled') return failed('The sub-agent was cancelled before it finished.');
        const note = outcome.reason === 'step-limit' ? `\n\n(The sub-agent reached its step limit after ${outcome.steps} steps; its answer may be incomplete.)` : '';
        const answer = outcome.answer.trim() === '' ? `(The sub-agent ended without an answer: ${outcome.reason}.)` : outcome.answer;
        return ok(`${answer}${note}`, metadata);
      } catch (error) {
        context.signal.throwIfAborted();
        return failed(error instanceof Error ? error.message : String(error));
      }
    },
  };
}
