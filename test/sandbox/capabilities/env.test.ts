/**
 * Pins: env values come only from the operator's secrets, never from process.env; each read and
 * each denial is audited; Deno 2's order holds (grant check first, then key validation); a
 * granted but unset variable reads as null; toObject needs `env: true`, and a list (even `*`)
 * gets Deno's `Requires env access`.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ALL_VARIABLES_TARGET, bindEnv } from '../../../sandbox/capabilities/env.ts';
import { CallError, GuestError } from '../../../sandbox/errors.ts';
import { NO_GRANT, normalizeGrant } from '../../../sandbox/grants/grant.ts';
import type { Grant } from '../../../sandbox/grants/grant.ts';
import { IDENTITY, recordingSink } from '../grants/fixtures.ts';
import type { RecordingSink } from '../grants/fixtures.ts';

const SECRETS = Object.freeze({ WEATHER_KEY: 'w-123', AWS_KEY_ID: 'AKIA', AWS_SECRET: 's3cr3t', OTHER: 'o' });
const listGrant = normalizeGrant({ env: ['WEATHER_KEY', 'AWS_*', 'UNSET_VAR'] }, { cwd: '/' });
const denied = (name: string) => new GuestError('NotCapable', `Requires env access to "${name}", run again with the --allow-env flag`);

let audit: RecordingSink;
const bind = (grant: Grant, secrets: Record<string, string> = SECRETS) => bindEnv(grant, IDENTITY, { secrets, audit });

beforeEach(() => {
  audit = recordingSink();
});

describe('envGet', () => {
  it('reads a granted variable from the secrets and audits the use', () => {
    const { handlers } = bind(listGrant);
    expect(handlers.envGet({ name: 'WEATHER_KEY' })).toBe('w-123');
    expect(handlers.envGet({ name: 'AWS_SECRET' })).toBe('s3cr3t');
    expect(audit.records).toEqual([
      { ...IDENTITY, capability: 'env', target: 'WEATHER_KEY', allowed: true, reason: undefined },
      { ...IDENTITY, capability: 'env', target: 'AWS_SECRET', allowed: true, reason: undefined },
    ]);
  });

  it('denies a variable outside the grant with Deno\'s message and audits the denial', () => {
    const { handlers } = bind(listGrant);
    expect(() => handlers.envGet({ name: 'OTHER' })).toThrow(denied('OTHER'));
    expect(() => handlers.envGet({ name: 'weather_key' })).toThrow(denied('weather_key'));
    expect(audit.records).toEqual([
      { ...IDENTITY, capability: 'env', target: 'OTHER', allowed: false, reason: 'not granted' },
      { ...IDENTITY, capability: 'env', target: 'weather_key', allowed: false, reason: 'not granted' },
    ]);
  });

  it('returns null for a granted variable that is not configured', () => {
    expect(bind(listGrant).handlers.envGet({ name: 'UNSET_VAR' })).toBeNull();
  });

  it('never reads the process environment', () => {
    process.env.PADDOCK_TEST_LEAK = 'from-process';
    try {
      const { handlers } = bind({ ...NO_GRANT, env: true }, {});
      expect(handlers.envGet({ name: 'PADDOCK_TEST_LEAK' })).toBeNull();
      expect(handlers.envGet({ name: 'PATH' })).toBeNull();
      expect(handlers.envToObject({})).toEqual({});
    } finally {
      delete process.env.PADDOCK_TEST_LEAK;
    }
  });

  it('treats prototype names as plain names', () => {
    const { handlers } = bind({ ...NO_GRANT, env: true }, { WEATHER_KEY: 'w' });
    expect(handlers.envGet({ name: '__proto__' })).toBeNull();
    expect(handlers.envGet({ name: 'constructor' })).toBeNull();
    expect(handlers.envGet({ name: 'toString' })).toBeNull();
  });

  it('checks the grant before validating the key, as Deno does', () => {
    expect(() => bind(listGrant).handlers.envGet({ name: '' })).toThrow(denied(''));
    expect(() => bind(listGrant).handlers.envGet({ name: 'A=B' })).toThrow(denied('A=B'));
    const all = bind({ ...NO_GRANT, env: true }).handlers;
    expect(() => all.envGet({ name: '' })).toThrow(new GuestError('TypeError', 'Key is an empty string.'));
    expect(() => all.envGet({ name: 'A=B' })).toThrow(new GuestError('TypeError', 'Key contains invalid characters: "A=B"'));
    expect(() => all.envGet({ name: 'A\0B' })).toThrow(new GuestError('TypeError', 'Key contains invalid characters: "A\\0B"'));
  });

  it('uses a snapshot of the secrets taken when the call was bound', () => {
    const secrets: Record<string, string> = { WEATHER_KEY: 'before' };
    const { handlers } = bind(listGrant, secrets);
    secrets.WEATHER_KEY = 'after';
    expect(handlers.envGet({ name: 'WEATHER_KEY' })).toBe('before');
  });
});

describe('envToObject', () => {
  it('returns every configured secret under env: true, audited once', () => {
    const { handlers } = bind({ ...NO_GRANT, env: true });
    expect(handlers.envToObject({})).toEqual(SECRETS);
    expect(audit.records).toEqual([{ ...IDENTITY, capability: 'env', target: ALL_VARIABLES_TARGET, allowed: true, reason: undefined }]);
  });

  it('is refused with Deno\'s message when env is granted only as a list, even `*`', () => {
    const message = 'Requires env access, run again with the --allow-env flag';
    expect(() => bind(listGrant).handlers.envToObject({})).toThrow(new GuestError('NotCapable', message));
    expect(() => bind(normalizeGrant({ env: ['*'] }, { cwd: '/' })).handlers.envToObject({})).toThrow(new GuestError('NotCapable', message));
    expect(() => bind(NO_GRANT).handlers.envToObject({})).toThrow(new GuestError('NotCapable', message));
    expect(audit.records.map((record) => [record.target, record.allowed])).toEqual([['*', false], ['*', false], ['*', false]]);
  });
});

describe('binding', () => {
  it('refuses every handler after revoke, without auditing', () => {
    const bound = bind({ ...NO_GRANT, env: true });
    bound.revoke();
    expect(() => bound.handlers.envGet({ name: 'WEATHER_KEY' })).toThrow(CallError);
    expect(() => bound.handlers.envToObject({})).toThrow(new CallError('aborted', 'envToObject was used after the call ended.', { operation: 'envToObject' }));
    expect(audit.records).toEqual([]);
  });
});
