import type { Config } from '../config/schema.ts';
import type { ToolDescription } from '../tools/contract.ts';

/** How a session's agent works: its model, instructions, tools, grant policy and limits. */
export interface Profile {
  readonly name: string;
  readonly description: string;
  readonly model: string;
  readonly systemPrompt: string | undefined;
  /** Tools offered beyond the read-only view (names). */
  readonly allow: readonly string[];
  /** Tools never offered, whatever else says. */
  readonly deny: readonly string[];
  /** A grant policy (config "policies") that narrows the caller's own for tool calls in the session. */
  readonly policy: string | undefined;
  readonly maxSteps: number;
  /** Characters of context sent per model request at most (the newest part). */
  readonly maxContextChars: number;
  /** Opens the tools of every kind; without it a session sees tools of kind `read` plus `allow`. */
  readonly writes: boolean;
  /** Ask the model for streamed answers. */
  readonly stream: boolean;
  /** Profiles a session may switch to with switch_profile. */
  readonly switchTo: readonly string[];
  /** How deep spawn_agent may nest (0: no sub-agents). */
  readonly maxSpawnDepth: number;
}

export const DEFAULT_PROFILE = 'default';

/** Every profile by name (config "profiles", defaults already filled in by the loader); "default" always exists. */
export function profilesFromConfig(config: Config): ReadonlyMap<string, Profile> {
  const profiles = new Map<string, Profile>();
  for (const [name, entry] of Object.entries(config.profiles)) {
    profiles.set(name, Object.freeze({
      name,
      description: entry.description ?? (entry.writes ? 'Tools of every kind.' : 'Read-only tools.'),
      model: entry.model ?? config.llm.model,
      systemPrompt: entry.systemPrompt,
      allow: Object.freeze([...entry.tools.allow]),
      deny: Object.freeze([...entry.tools.deny]),
      policy: entry.policy,
      maxSteps: entry.maxSteps,
      maxContextChars: entry.maxContextChars,
      writes: entry.writes,
      stream: entry.stream,
      switchTo: Object.freeze([...entry.switchTo]),
      maxSpawnDepth: entry.maxSpawnDepth,
    }));
  }
  return profiles;
}

/**
 * The tools a session of this profile is offered: tools of kind `read` (all kinds when the profile
 * opens writes), plus those the profile allows by name and those tools/enabled.json adds to every
 * profile, minus the profile's deny list; `limit` (a sub-agent's) narrows further.
 */
export function toolView(
  profile: Profile,
  tools: readonly ToolDescription[],
  options: { enabled?: readonly string[]; limit?: readonly string[] | null } = {},
): ToolDescription[] {
  const allow = new Set([...profile.allow, ...(options.enabled ?? [])]);
  const deny = new Set(profile.deny);
  const limit = options.limit === undefined || options.limit === null ? undefined : new Set(options.limit);
  return tools.filter((tool) =>
    !deny.has(tool.name)
    && (profile.writes || tool.kind === 'read' || allow.has(tool.name))
    && (limit === undefined || limit.has(tool.name)));
}
