/** Pins: the shipped paddock.example.json is a valid config, and it names every key the schema has. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config/load.ts';
import { ConfigSchema } from '../../runtime/config/schema.ts';

const EXAMPLE = new URL('../../paddock.example.json', import.meta.url);

describe('paddock.example.json', () => {
  it('loads without a single problem', () => {
    const config = loadConfig({ configPath: EXAMPLE.pathname, env: {}, cwd: '/srv/paddock' });
    expect(config.apiKeys.map((key) => [key.name, key.policy])).toEqual([['operator', 'trusted'], ['ci-bot', 'default']]);
    expect(config.policies['trusted']).toMatchObject({ net: true });
  });

  it('shows every top-level key of the schema (except $schema and the derived workspaceDir)', () => {
    const example = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as Record<string, unknown>;
    const keys = Object.keys(ConfigSchema.properties).filter((key) => key !== '$schema' && key !== 'workspaceDir');
    expect(Object.keys(example).sort()).toEqual(keys.sort());
  });
});
