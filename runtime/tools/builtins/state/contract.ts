/**
 * What the state tools need from above, declared here and implemented by runtime/sessions (the
 * store) and the session service (the agent bridge): the tools never import sessions/ or agent/.
 */

export const TODO_STATUSES = ['pending', 'in_progress', 'done', 'failed', 'skipped'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

export interface TodoItem {
  readonly id: number;
  readonly content: string;
  readonly status: TodoStatus;
  readonly note: string | null;
}

export interface ScratchpadSection {
  readonly name: string;
  readonly content: string;
  readonly updatedAt: string;
}

export interface MemoryEntry {
  readonly id: number;
  readonly content: string;
  readonly tags: readonly string[];
  readonly createdAt: string;
}

export interface MemoryHit extends MemoryEntry {
  /** The matching passage with the matched terms in [brackets]. */
  readonly snippet: string;
}

/** Per-session state (todo list, scratchpad), persisted. */
export interface SessionStateStore {
  /** The profile of a session (memory is scoped by it), or undefined for an unknown session. */
  profileOf(sessionId: string): string | undefined;
  todos(sessionId: string): TodoItem[];
  setTodos(sessionId: string, items: readonly { content: string; status: TodoStatus }[]): TodoItem[];
  updateTodo(sessionId: string, id: number, change: { content?: string | undefined; status?: TodoStatus | undefined; note?: string | undefined }): TodoItem | undefined;
  sections(sessionId: string): ScratchpadSection[];
  writeSection(sessionId: string, name: string, content: string): ScratchpadSection;
  /** Appends, creating the section if needed; returns the section as it now is. */
  appendSection(sessionId: string, name: string, content: string): ScratchpadSection;
  /** Clears one section or, without a name, all of them; returns how many were removed. */
  clearSections(sessionId: string, name?: string): number;
}

/** Long-term memory, one scope per profile, searched by full text. */
export interface MemoryStore {
  save(scope: string, content: string, tags: readonly string[]): MemoryEntry;
  /** Best matches first. */
  search(scope: string, query: string, limit: number): MemoryHit[];
  forget(scope: string, id: number): boolean;
  count(scope: string): number;
}

export interface ProfileSummary {
  readonly name: string;
  readonly description: string;
  readonly current: boolean;
  /** Whether this session may switch to it. */
  readonly switchable: boolean;
  readonly writes: boolean;
}

export interface SubAgentRequest {
  readonly task: string;
  /** Restricts the sub-agent to these tools (never wider than the parent's). */
  readonly tools?: readonly string[] | undefined;
  readonly maxSteps?: number | undefined;
}

export interface SubAgentOutcome {
  readonly answer: string;
  readonly reason: string;
  readonly steps: number;
  readonly toolCalls: number;
}

/** The agent-side functions the session service lends to spawn_agent, reflect and the profile tools. */
export interface AgentBridge {
  spawnSubAgent(parentSessionId: string, request: SubAgentRequest, signal: AbortSignal, onUpdate: (text: string) => void): Promise<SubAgentOutcome>;
  reflect(sessionId: string, focus: string | undefined, signal: AbortSignal): Promise<string>;
  listProfiles(sessionId: string): ProfileSummary[];
  /** Throws an Error whose message says why the switch is refused. */
  switchProfile(sessionId: string, name: string): ProfileSummary;
}
