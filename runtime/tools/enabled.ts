import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describeJsonSyntaxError } from '../json-syntax-error.ts';
import { TOOL_NAME } from '../registry/validate-declarations.ts';

/**
 * tools/enabled.json (SPEC §4): a JSON array of user tool names added to every profile. Read on its
 * own, independent of the loader: a name that no file defines is not an error here (the tool may
 * load later); the profile resolution intersects it with the live registry.
 */

export const ENABLED_FILE = 'enabled.json';
const MAX_BYTES = 64 * 1024;

export interface EnabledTools {
  /** Valid names, each once, in file order. */
  readonly names: readonly string[];
  /** One line per mistake; entries with a mistake are left out, the rest still count. */
  readonly problems: readonly string[];
  /** Whether the file exists (a missing file means no tools are added, which is not a problem). */
  readonly found: boolean;
}

/** Reads `<toolsDir>/enabled.json`. Never throws for the file's content or absence. */
export async function readEnabledTools(toolsDir: string): Promise<EnabledTools> {
  const file = path.join(toolsDir, ENABLED_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { names: [], problems: [], found: false };
    return { names: [], problems: [`${ENABLED_FILE}: cannot be read: ${(error as Error).message}`], found: true };
  }
  return parseEnabledTools(text);
}

/** Parses the file's text; `label` names it in problems. */
export function parseEnabledTools(text: string, label = ENABLED_FILE): EnabledTools {
  if (Buffer.byteLength(text) > MAX_BYTES) return { names: [], problems: [`${label}: the file is over ${MAX_BYTES} bytes`], found: true };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { names: [], problems: [`${label}: not valid JSON: ${describeJsonSyntaxError(text, error)}`], found: true };
  }
  if (!Array.isArray(value)) {
    return { names: [], problems: [`${label}: expected a JSON array of tool names, like ["weather", "get_current_datetime"], found ${value === null ? 'null' : typeof value}`], found: true };
  }
  const names: string[] = [];
  const problems: string[] = [];
  value.forEach((entry: unknown, index) => {
    if (typeof entry !== 'string') problems.push(`${label}[${index}]: expected a tool name (a string), found ${entry === null ? 'null' : Array.isArray(entry) ? 'an array' : typeof entry}`);
    else if (!TOOL_NAME.test(entry)) problems.push(`${label}[${index}]: "${entry}" is not a tool name (${TOOL_NAME.source})`);
    else if (names.includes(entry)) problems.push(`${label}[${index}]: "${entry}" is listed twice`);
    else names.push(entry);
  });
  return { names, problems, found: true };
}
