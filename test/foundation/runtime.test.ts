/**
 * Pins: the test suite (and so every npm script) runs on the pinned Node 24 from the `node@24` dev
 * dependency, even on a machine whose system Node is older.
 */
import { describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };

describe('runtime', () => {
  it('is Node.js 24', () => {
    expect(process.version).toMatch(/^v24\./);
  });

  it('is the version package.json pins', () => {
    expect(packageJson.devDependencies.node).toBe(process.versions.node);
    expect(packageJson.engines.node).toBe('>=24 <25');
  });
});
