/**
 * Pins: Deno.permissions.query is answered from the call's own grant (granted / prompt, never
 * partial), relative paths against the call's cwd, and refused once the call has ended.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindPermissions } from '../../../sandbox/capabilities/permissions.ts';
import { CallError, GuestError } from '../../../sandbox/errors.ts';
import { NO_GRANT, normalizeGrant } from '../../../sandbox/grants/grant.ts';
import { IDENTITY, makeWorkspace } from '../grants/fixtures.ts';
import type { Workspace } from '../grants/fixtures.ts';

let workspace: Workspace;
beforeAll(async () => {
  workspace = await makeWorkspace();
  await mkdir(path.join(workspace.root, 'data'));
});
afterAll(() => workspace.cleanup());

describe('permissionsQuery', () => {
  it('answers granted for what the grant covers and prompt for the rest', async () => {
    const grant = normalizeGrant({ net: ['api.example.com'], read: ['data'], env: ['KEY'] }, { cwd: workspace.root });
    const { handlers } = bindPermissions(grant, IDENTITY, { cwd: workspace.root });
    expect(await handlers.permissionsQuery({ name: 'net', host: 'api.example.com:443' })).toEqual({ state: 'granted', partial: false });
    expect(await handlers.permissionsQuery({ name: 'net' })).toEqual({ state: 'prompt', partial: false });
    expect(await handlers.permissionsQuery({ name: 'read', path: 'data/file.txt' })).toEqual({ state: 'granted', partial: false });
    expect(await handlers.permissionsQuery({ name: 'read', path: '../elsewhere' })).toEqual({ state: 'prompt', partial: false });
    expect(await handlers.permissionsQuery({ name: 'write', path: 'data' })).toEqual({ state: 'prompt', partial: false });
    expect(await handlers.permissionsQuery({ name: 'env', variable: 'KEY' })).toEqual({ state: 'granted', partial: false });
  });

  it('passes Deno\'s errors for malformed descriptors', async () => {
    const { handlers } = bindPermissions(NO_GRANT, IDENTITY, { cwd: workspace.root });
    await expect(handlers.permissionsQuery({ name: 'hrtime' }))
      .rejects.toEqual(new GuestError('TypeError', 'The provided value "hrtime" is not a valid permission name'));
  });

  it('is refused after revoke', async () => {
    const bound = bindPermissions(NO_GRANT, IDENTITY, { cwd: workspace.root });
    bound.revoke();
    await expect(bound.handlers.permissionsQuery({ name: 'net' })).rejects.toBeInstanceOf(CallError);
  });
});
