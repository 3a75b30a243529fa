import { OpenAIModelClient } from '../agent/model-client.ts';
import type { ModelClient, ModelClientOptions } from '../agent/model-client.ts';
import type { Config } from '../config/schema.ts';
import type { ToolSystem } from '../coordinator/tool-system.ts';
import type { Logger } from '../observability/logger.ts';
import { profilesFromConfig } from '../profiles/profiles.ts';
import { stateTools } from '../tools/builtins/state/index.ts';
import type { BuiltinTool } from '../tools/contract.ts';
import { LateAgentBridge } from './late-bridge.ts';
import { SessionService } from './session-service.ts';
import type { SessionServiceLimits } from './session-service.ts';
import { openStore } from './store.ts';
import type { Store } from './store.ts';

/**
 * The agent side of the service, in the order start-up needs it: the store opens first and the
 * state tools are built over it (they go to the tool system with the other built-ins); once the
 * tool system is up, `start` creates the session service and connects the tools' bridge to it.
 */
export interface AgentRuntime {
  readonly store: Store;
  /** todo, scratchpad, memory_*, list_profiles, switch_profile, spawn_agent, reflect. */
  readonly builtins: readonly BuiltinTool[];
  start(tools: ToolSystem): SessionService;
  /** Closes the store when start-up fails before `start` (the service closes it otherwise). */
  abandon(): void;
}

export interface AgentRuntimeOptions {
  readonly config: Config;
  readonly log: Logger;
  /** The model client (tests, other providers); the openai SDK on config.llm otherwise. */
  readonly model?: ModelClient | undefined;
  readonly limits?: Partial<SessionServiceLimits> | undefined;
}

export function openAgentRuntime(options: AgentRuntimeOptions): AgentRuntime {
  const { config, log } = options;
  const store = openStore(config.dataDir);
  const bridge = new LateAgentBridge();
  return {
    store,
    builtins: stateTools({ state: store.state, memory: store.memory, agent: bridge }),
    start(tools) {
      const sessions = new SessionService({
        store, coordinator: tools.coordinator, registry: tools.registry, profiles: profilesFromConfig(config), config, log: log.child({ component: 'sessions' }),
        model: options.model ?? new OpenAIModelClient(modelClientOptions(config.llm)),
        limits: options.limits,
      });
      bridge.bind(sessions);
      return sessions;
    },
    abandon() {
      store.close();
    },
  };
}

/** The model client's settings from the operator's `llm` section. */
export function modelClientOptions(llm: Config['llm']): ModelClientOptions {
  const { baseUrl, apiKey, requestTimeoutMs, idleTimeoutMs, maxRetries, retryBaseMs, retryMaxMs } = llm;
  return { baseUrl, apiKey, requestTimeoutMs, idleTimeoutMs, maxRetries, retryBaseMs, retryMaxMs };
}
