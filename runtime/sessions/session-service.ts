import type { AgentEvent, RunEndReason, ToolCallOutcome } from '../agent/events.ts';
import type { ContextMessage } from '../agent/messages.ts';
import type { ModelClient } from '../agent/model-client.ts';
import { runTurn } from '../agent/run-turn.ts';
import type { RunSettings, TurnOutcome } from '../agent/run-turn.ts';
import { reflectionPrompt } from '../agent/tool-messages.ts';
import type { Caller } from '../auth/keys.ts';
import { hasScope } from '../auth/keys.ts';
import type { Config } from '../config/schema.ts';
import type { Coordinator } from '../coordinator/coordinator.ts';
import type { Logger } from '../observability/logger.ts';
import { DEFAULT_PROFILE, toolView } from '../profiles/profiles.ts';
import type { Profile } from '../profiles/profiles.ts';
import type { ToolRegistry } from '../registry/registry.ts';
import type { AgentBridge, ProfileSummary, ScratchpadSection, SubAgentOutcome, SubAgentRequest, TodoItem } from '../tools/builtins/state/contract.ts';
import { readEnabledTools } from '../tools/enabled.ts';
import type { SessionRecord, StoredDisplayEntry } from './session-store.ts';
import type { Store } from './store.ts';

export class SessionNotFoundError extends Error {
  constructor(id: string) {
    super(`There is no session "${id}".`);
    this.name = new.target.name;
  }
}

export class SessionBusyError extends Error {
  constructor(id: string) {
    super(`Session "${id}" is already running a turn; wait for it to end or cancel it (POST /v1/sessions/${id}/cancel).`);
    this.name = new.target.name;
  }
}

export class UnknownProfileError extends Error {
  constructor(name: string, known: readonly string[]) {
    super(`There is no profile "${name}". Profiles: ${known.join(', ')}.`);
    this.name = new.target.name;
  }
}

export interface SessionServiceLimits {
  /** Longest user message, in characters. @defaultValue 100_000 */
  readonly maxMessageChars: number;
  /** Longest transcript reflect shows the model, in characters (the newest part is kept). @defaultValue 24_000 */
  readonly maxReflectChars: number;
}

export const DEFAULT_SESSION_LIMITS: SessionServiceLimits = { maxMessageChars: 100_000, maxReflectChars: 24_000 };

export interface SessionServiceOptions {
  readonly store: Store;
  readonly coordinator: Coordinator;
  readonly registry: ToolRegistry;
  readonly profiles: ReadonlyMap<string, Profile>;
  readonly config: Config;
  readonly model: ModelClient;
  readonly log: Logger;
  readonly limits?: Partial<SessionServiceLimits> | undefined;
}

export interface SessionSummary {
  readonly id: string;
  readonly profile: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly running: boolean;
}

export interface SessionView extends SessionSummary {
  readonly history: readonly StoredDisplayEntry[];
  readonly todo: readonly TodoItem[];
  readonly scratchpad: readonly ScratchpadSection[];
  readonly tools: readonly string[];
}

export type RunResult =
  | { readonly status: 'ended'; readonly reason: RunEndReason; readonly steps: number; readonly text: string; readonly toolCalls: readonly ToolCallOutcome[] }
  | { readonly status: 'failed'; readonly error: { readonly kind: string; readonly message: string }; readonly steps: number; readonly toolCalls: readonly ToolCallOutcome[] };

export interface RunOptions {
  /** Aborts the run (a client that went away); cancel() does the same from elsewhere. */
  readonly signal?: AbortSignal | undefined;
  readonly onEvent?: ((event: AgentEvent) => void) | undefined;
}

/** A session reserved for one run: `run` it (once) or `release` it. */
export interface RunTicket {
  readonly sessionId: string;
  run(content: string, options?: RunOptions): Promise<RunResult>;
  release(): void;
}

interface ActiveRun {
  readonly controller: AbortController;
  readonly caller: Caller;
  /** The model context as the run has it now (reflect reads it). */
  readonly messages: ContextMessage[];
  profile: Profile;
  done: Promise<unknown>;
}

/**
 * Sessions: create, read, delete, and run one turn at a time per session (a second is refused),
 * with cancellation that aborts the run's tools. Both buffers are written as the run goes, one
 * transaction per step, so a restart loses nothing that was done. Implements the bridge that
 * spawn_agent, reflect and the profile tools reach up through.
 */
export class SessionService implements AgentBridge {
  readonly #options: SessionServiceOptions;
  readonly #limits: SessionServiceLimits;
  readonly #active = new Map<string, ActiveRun>();
  #closed = false;

  constructor(options: SessionServiceOptions) {
    this.#options = options;
    this.#limits = { ...DEFAULT_SESSION_LIMITS, ...options.limits };
  }

  get limits(): SessionServiceLimits {
    return this.#limits;
  }

  get profiles(): ReadonlyMap<string, Profile> {
    return this.#options.profiles;
  }

  create(caller: Caller, profileName: string = DEFAULT_PROFILE): SessionSummary {
    const profile = this.#profile(profileName);
    return this.#summary(this.#options.store.sessions.create({ owner: caller.name, profile: profile.name }));
  }

  list(caller: Caller): SessionSummary[] {
    return this.#options.store.sessions.list(hasScope(caller, 'admin') ? undefined : caller.name).map((record) => this.#summary(record));
  }

  async view(caller: Caller, id: string): Promise<SessionView> {
    const record = this.#visible(caller, id);
    const { store } = this.#options;
    const tools = await this.#toolsFor(record, this.#profile(record.profile));
    return {
      ...this.#summary(record),
      history: store.sessions.display(id), todo: store.state.todos(id), scratchpad: store.state.sections(id),
      tools: tools.map((tool) => tool.name),
    };
  }

  /** Deletes the session (cancelling its run first); false when there was nothing to delete. */
  async delete(caller: Caller, id: string): Promise<void> {
    this.#visible(caller, id);
    const active = this.#active.get(id);
    if (active !== undefined) {
      active.controller.abort(new DOMException('The session was deleted.', 'AbortError'));
      await active.done.catch(() => undefined);
    }
    this.#options.store.sessions.delete(id);
  }

  /** Cancels the running turn; false when none was running. */
  cancel(caller: Caller, id: string): boolean {
    this.#visible(caller, id);
    const active = this.#active.get(id);
    if (active === undefined) return false;
    active.controller.abort(new DOMException('The run was cancelled.', 'AbortError'));
    return true;
  }

  /** Reserves the session for one run, or throws (unknown session, a run already going) before anything starts. */
  begin(caller: Caller, id: string): RunTicket {
    if (this.#closed) throw new Error('The session service is shutting down.');
    const record = this.#visible(caller, id);
    if (this.#active.has(id)) throw new SessionBusyError(id);
    const active: ActiveRun = { controller: new AbortController(), caller, messages: [], profile: this.#profile(record.profile), done: Promise.resolve() };
    this.#active.set(id, active);
    let used = false;
    const release = (): void => {
      if (this.#active.get(id) === active) this.#active.delete(id);
    };
    return {
      sessionId: id,
      run: (content, options = {}) => {
        if (used) return Promise.reject(new Error('A run ticket runs once.'));
        used = true;
        const done = this.#run(record, active, content, options).finally(release);
        active.done = done;
        return done;
      },
      release: () => {
        if (!used) release();
      },
    };
  }

  /** Aborts every run and waits for them to record their end; then closes the store. */
  async close(): Promise<void> {
    this.#closed = true;
    const runs = [...this.#active.values()];
    for (const run of runs) run.controller.abort(new DOMException('The service is shutting down.', 'AbortError'));
    await Promise.all(runs.map((run) => run.done.catch(() => undefined)));
    this.#options.store.close();
  }

  // ---- AgentBridge: what spawn_agent, reflect, switch_profile and list_profiles reach up through.

  async spawnSubAgent(parentId: string, request: SubAgentRequest, signal: AbortSignal, onUpdate: (text: string) => void): Promise<SubAgentOutcome> {
    const parent = this.#options.store.sessions.get(parentId);
    const active = this.#active.get(parentId);
    if (parent === undefined || active === undefined) throw new Error('spawn_agent works only inside a session run.');
    const profile = active.profile;
    if (parent.depth + 1 > profile.maxSpawnDepth) {
      throw new Error(profile.maxSpawnDepth === 0
        ? `The profile "${profile.name}" does not allow sub-agents.`
        : `Sub-agents may nest at most ${profile.maxSpawnDepth} deep; this session is already at depth ${parent.depth}. Do the task here instead.`);
    }
    const parentTools = (await this.#toolsFor(parent, profile)).map((tool) => tool.name);
    let tools = parentTools;
    if (request.tools !== undefined) {
      const outside = request.tools.filter((name) => !parentTools.includes(name));
      if (outside.length > 0) throw new Error(`A sub-agent gets no tool its parent lacks: ${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not available here. Available: ${parentTools.join(', ')}.`);
      tools = [...new Set(request.tools)];
    }
    if (parent.depth + 2 > profile.maxSpawnDepth) tools = tools.filter((name) => name !== 'spawn_agent');
    const maxSteps = Math.min(request.maxSteps ?? profile.maxSteps, profile.maxSteps);

    const child = this.#options.store.sessions.create({
      owner: parent.owner, profile: profile.name, parentId, depth: parent.depth + 1, ephemeral: true, toolLimit: tools,
    });
    const childRun: ActiveRun = { controller: new AbortController(), caller: active.caller, messages: [], profile, done: Promise.resolve() };
    const forward = (): void => { childRun.controller.abort(signal.reason); };
    signal.addEventListener('abort', forward, { once: true });
    if (signal.aborted) forward();
    this.#active.set(child.id, childRun);
    try {
      onUpdate(`sub-agent started (${tools.length} tools, at most ${maxSteps} steps)`);
      const done = this.#run(child, childRun, request.task, {
        onEvent: (event) => {
          if (event.type === 'tool-call-start') onUpdate(`sub-agent calls ${event.tool}`);
          if (event.type === 'model-retry') onUpdate(`sub-agent: model retry ${event.attempt} (${event.kind})`);
        },
      }, maxSteps);
      childRun.done = done;
      const result = await done;
      if (result.status === 'failed') throw new Error(`The sub-agent failed: ${result.error.message}`);
      return { answer: result.text, reason: result.reason, steps: result.steps, toolCalls: result.toolCalls.length };
    } finally {
      signal.removeEventListener('abort', forward);
      this.#active.delete(child.id);
      this.#options.store.sessions.delete(child.id);
    }
  }

  async reflect(sessionId: string, focus: string | undefined, signal: AbortSignal): Promise<string> {
    const active = this.#active.get(sessionId);
    const record = this.#options.store.sessions.get(sessionId);
    if (record === undefined) throw new Error('reflect works only inside a session.');
    const messages = active?.messages ?? this.#options.store.sessions.context(sessionId);
    const profile = active?.profile ?? this.#profile(record.profile);
    const reply = await this.#options.model.complete({
      model: profile.model, stream: false, tools: [],
      messages: [
        { role: 'system', content: reflectionPrompt(focus) },
        { role: 'user', content: transcript(messages, this.#limits.maxReflectChars) },
      ],
    }, { signal });
    return reply.text.trim() === '' ? '(The reviewer had nothing to add.)' : reply.text.trim();
  }

  listProfiles(sessionId: string): ProfileSummary[] {
    const current = this.#currentProfile(sessionId);
    return [...this.#options.profiles.values()].map((profile) => ({
      name: profile.name, description: profile.description, current: profile.name === current.name,
      switchable: current.switchTo.includes(profile.name), writes: profile.writes,
    }));
  }

  switchProfile(sessionId: string, name: string): ProfileSummary {
    const current = this.#currentProfile(sessionId);
    const next = this.#options.profiles.get(name);
    if (next === undefined) throw new UnknownProfileError(name, [...this.#options.profiles.keys()]);
    if (next.name !== current.name && !current.switchTo.includes(next.name)) {
      throw new Error(`The profile "${current.name}" may not switch to "${name}"${current.switchTo.length === 0 ? ' (it may switch to none)' : `; it may switch to: ${current.switchTo.join(', ')}`}.`);
    }
    this.#options.store.sessions.setProfile(sessionId, next.name);
    const active = this.#active.get(sessionId);
    if (active !== undefined) active.profile = next;
    return { name: next.name, description: next.description, current: true, switchable: next.switchTo.includes(next.name), writes: next.writes };
  }

  // ---- internals

  async #run(record: SessionRecord, active: ActiveRun, content: string, options: RunOptions, maxStepsCap?: number): Promise<RunResult> {
    const { store, coordinator, log } = this.#options;
    const signal = options.signal === undefined ? active.controller.signal : AbortSignal.any([active.controller.signal, options.signal]);
    const toolCalls: ToolCallOutcome[] = [];
    const emit = (event: AgentEvent): void => {
      if (event.type === 'tool-result') toolCalls.push(event.result);
      try {
        options.onEvent?.(event);
      } catch (error) {
        log.warn({ err: error, sessionId: record.id }, 'an event listener failed');
      }
    };

    store.sessions.append(record.id, { display: [{ type: 'user', content }], context: [{ role: 'user', content }] });
    active.messages.push(...store.sessions.context(record.id));

    // Tools are built when the run starts, and again only after a switch_profile (from the next step).
    let settingsProfile = active.profile;
    let settings = await this.#settings(record, settingsProfile, maxStepsCap);
    const current = async (): Promise<RunSettings> => {
      if (active.profile !== settingsProfile) {
        settingsProfile = active.profile;
        settings = await this.#settings(record, settingsProfile, maxStepsCap);
      }
      return settings;
    };

    let outcome: TurnOutcome;
    try {
      outcome = await runTurn({
        model: this.#options.model,
        settings: current,
        context: active.messages,
        signal,
        onEvent: emit,
        onStep: (additions) => {
          store.sessions.append(record.id, additions);
          active.messages.push(...additions.context);
        },
        invoke: (name, params, call) => coordinator.invoke(name, {
          caller: active.caller, params, sessionId: record.id, signal: call.signal, onUpdate: call.onUpdate,
          grants: this.#narrowing(settingsProfile),
          // A sub-agent's calls run in the slot its spawn_agent call holds: at the concurrency limit,
          // spawn_agent calls waiting for queued calls of their own sub-agents would wait forever.
          nested: record.parentId !== null,
        }),
      });
    } catch (error) {
      // The loop reports model failures itself; anything here is a bug, kept out of the client's view.
      log.error({ err: error, sessionId: record.id }, 'agent run failed');
      const failure = { kind: 'internal', message: 'The run failed unexpectedly; the error was logged. The session is intact.' };
      store.sessions.append(record.id, { display: [{ type: 'error', ...failure }] });
      emit({ type: 'run-error', error: { kind: 'internal', message: failure.message }, steps: 0 });
      return { status: 'failed', error: failure, steps: 0, toolCalls };
    }
    return outcome.status === 'ended'
      ? { status: 'ended', reason: outcome.reason, steps: outcome.steps, text: outcome.text, toolCalls }
      : { status: 'failed', error: outcome.error, steps: outcome.steps, toolCalls };
  }

  async #settings(record: SessionRecord, profile: Profile, maxStepsCap: number | undefined): Promise<RunSettings> {
    return {
      model: profile.model,
      systemPrompt: profile.systemPrompt,
      tools: await this.#toolsFor(record, profile),
      maxSteps: Math.min(profile.maxSteps, maxStepsCap ?? profile.maxSteps),
      maxContextChars: profile.maxContextChars,
      stream: profile.stream,
    };
  }

  async #toolsFor(record: SessionRecord, profile: Profile) {
    const enabled = await readEnabledTools(this.#options.config.toolsDir);
    return toolView(profile, this.#options.registry.describeAll(), { enabled: enabled.names, limit: record.toolLimit });
  }

  /** The profile's grant policy, sent as the call's narrowing: the caller's own policy still bounds it. */
  #narrowing(profile: Profile): unknown {
    return profile.policy === undefined ? undefined : this.#options.config.policies[profile.policy] ?? {};
  }

  #profile(name: string): Profile {
    const profile = this.#options.profiles.get(name);
    if (profile === undefined) throw new UnknownProfileError(name, [...this.#options.profiles.keys()]);
    return profile;
  }

  #currentProfile(sessionId: string): Profile {
    const active = this.#active.get(sessionId);
    if (active !== undefined) return active.profile;
    const record = this.#options.store.sessions.get(sessionId);
    if (record === undefined) throw new SessionNotFoundError(sessionId);
    return this.#profile(record.profile);
  }

  /** A session the caller may see (its own, or any for admins); sub-agent sessions are internal. */
  #visible(caller: Caller, id: string): SessionRecord {
    const record = this.#options.store.sessions.get(id);
    if (record === undefined || record.ephemeral || (record.owner !== caller.name && !hasScope(caller, 'admin'))) throw new SessionNotFoundError(id);
    return record;
  }

  #summary(record: SessionRecord): SessionSummary {
    return { id: record.id, profile: record.profile, createdAt: record.createdAt, updatedAt: record.updatedAt, running: this.#active.has(record.id) };
  }
}

/** The session so far as plain text for a reviewer, newest part kept when it is long. */
export function transcript(messages: readonly ContextMessage[], maxChars: number): string {
  const clip = (text: string, max = 2_000): string => (text.length > max ? `${text.slice(0, max)} …(${text.length - max} more characters)` : text);
  const lines = messages.map((message) => {
    switch (message.role) {
      case 'system': return `[system] ${clip(message.content)}`;
      case 'user': return `[user] ${clip(typeof message.content === 'string' ? message.content : message.content.map((part) => (part.type === 'text' ? part.text : '(image)')).join(' '))}`;
      case 'assistant': {
        const calls = (message.tool_calls ?? []).map((call) => `[assistant calls ${call.function.name} (${call.id})] ${clip(call.function.arguments, 500)}`);
        return [message.content === null || message.content === '' ? undefined : `[assistant] ${clip(message.content)}`, ...calls].filter((line) => line !== undefined).join('\n');
      }
      case 'tool': return `[result of ${message.tool_call_id}] ${clip(message.content)}`;
    }
  });
  const text = lines.join('\n');
  return text.length > maxChars ? `…(earlier part left out)\n${text.slice(text.length - maxChars)}` : text;
}
