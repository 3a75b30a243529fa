/**
 * Pins tools/enabled.json's reader: a JSON array of tool names; each mistake is one precise line
 * and leaves only its entry out; a missing file adds nothing. The shipped file names shipped tools.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnabledTools, readEnabledTools } from '../../runtime/tools/enabled.ts';
import { tempDir } from '../helpers/temp.ts';

describe('parseEnabledTools', () => {
  it('reads names in file order', () => {
    expect(parseEnabledTools('["weather", "get_current_datetime"]')).toEqual({ names: ['weather', 'get_current_datetime'], problems: [], found: true });
    expect(parseEnabledTools('[]')).toEqual({ names: [], problems: [], found: true });
  });

  it('leaves out each bad entry with one line saying why, keeping the rest', () => {
    expect(parseEnabledTools('["weather", 7, "Bad-Name", "weather", null, "ok_tool"]')).toEqual({
      names: ['weather', 'ok_tool'],
      problems: [
        'enabled.json[1]: expected a tool name (a string), found number',
        'enabled.json[2]: "Bad-Name" is not a tool name (^[a-z][a-z0-9_]{0,63}$)',
        'enabled.json[3]: "weather" is listed twice',
        'enabled.json[4]: expected a tool name (a string), found null',
      ],
      found: true,
    });
  });

  it('refuses what is not an array of names, and invalid JSON with its position', () => {
    expect(parseEnabledTools('{"tools": ["weather"]}').problems).toEqual(['enabled.json: expected a JSON array of tool names, like ["weather", "get_current_datetime"], found object']);
    const broken = parseEnabledTools('["weather",\n]', 'tools/enabled.json');
    expect(broken.names).toEqual([]);
    expect(broken.problems).toEqual([expect.stringMatching(/^tools\/enabled\.json: not valid JSON: .*line 2 column 1/)]);
  });
});

describe('readEnabledTools', () => {
  it('treats a missing file as no tools, not as a problem', async () => {
    expect(await readEnabledTools(await tempDir())).toEqual({ names: [], problems: [], found: false });
  });

  it('reads the file in the tools folder', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'enabled.json'), '["a_tool"]\n');
    expect(await readEnabledTools(dir)).toEqual({ names: ['a_tool'], problems: [], found: true });
  });

  it('ships tools/enabled.json naming only tools that ship in tools/', async () => {
    const tools = path.resolve(import.meta.dirname, '../../tools');
    const enabled = await readEnabledTools(tools);
    expect(enabled).toMatchObject({ problems: [], found: true });
    expect(enabled.names.length).toBeGreaterThan(0);
    for (const name of enabled.names) expect(existsSync(path.join(tools, `${name}.ts`)), name).toBe(true);
  });
});
