import type { AgentBridge, ProfileSummary, SubAgentOutcome, SubAgentRequest } from '../tools/builtins/state/contract.ts';

/**
 * The agent bridge handed to the state tools when they are built, before the session service
 * exists (the tool system, which the service needs, starts with the built-ins). `bind` connects it.
 */
export class LateAgentBridge implements AgentBridge {
  #target: AgentBridge | undefined;

  bind(target: AgentBridge): void {
    this.#target = target;
  }

  spawnSubAgent(parentSessionId: string, request: SubAgentRequest, signal: AbortSignal, onUpdate: (text: string) => void): Promise<SubAgentOutcome> {
    return this.#get().spawnSubAgent(parentSessionId, request, signal, onUpdate);
  }

  reflect(sessionId: string, focus: string | undefined, signal: AbortSignal): Promise<string> {
    return this.#get().reflect(sessionId, focus, signal);
  }

  listProfiles(sessionId: string): ProfileSummary[] {
    return this.#get().listProfiles(sessionId);
  }

  switchProfile(sessionId: string, name: string): ProfileSummary {
    return this.#get().switchProfile(sessionId, name);
  }

  #get(): AgentBridge {
    if (this.#target === undefined) throw new Error('The session service is not running.');
    return this.#target;
  }
}
