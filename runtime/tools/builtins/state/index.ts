import type { BuiltinTool } from '../../contract.ts';
import type { AgentBridge, MemoryStore, SessionStateStore } from './contract.ts';
import { memoryTools } from './memory.ts';
import { profileTools } from './profiles.ts';
import { reflectTool } from './reflect.ts';
import { scratchpadTool } from './scratchpad.ts';
import { spawnAgentTool } from './spawn-agent.ts';
import { todoTool } from './todo.ts';

export type { AgentBridge, MemoryStore, SessionStateStore } from './contract.ts';

export interface StateToolDeps {
  /** Per-session todo list and scratchpad (runtime/sessions/state-store.ts). */
  readonly state: SessionStateStore;
  /** Long-term memory per profile (runtime/sessions/memory-store.ts). */
  readonly memory: MemoryStore;
  /** Upward functions of the session service (a LateAgentBridge until the service is up). */
  readonly agent: AgentBridge;
}

/**
 * The agent-side built-ins (SPEC §7): todo, scratchpad, memory_save, memory_search, memory_forget,
 * list_profiles, switch_profile, spawn_agent, reflect. They keep state per session or per profile,
 * or reach the session's run, so they need a session: called without one
 * (POST /v1/tools/{name}/invoke) they answer with an error result.
 */
export function stateTools(deps: StateToolDeps): BuiltinTool[] {
  return [
    todoTool(deps.state),
    scratchpadTool(deps.state),
    ...memoryTools(deps.state, deps.memory),
    ...profileTools(deps.agent),
    spawnAgentTool(deps.agent),
    reflectTool(deps.agent),
  ];
}
