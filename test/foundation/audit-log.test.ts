/**
 * Pins: every audit record lands as one JSON line (with a timestamp) in <data>/audit.jsonl, mode
 * 0600; denials are also logged as warnings.
 */
import { readFile, stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../runtime/observability/audit-log.ts';
import { captureLog } from '../helpers/app.ts';
import { tempDir } from '../helpers/temp.ts';

describe('AuditLog', () => {
  it('appends one JSON line per record and warns on denials', async ({ onTestFinished }) => {
    const dataDir = await tempDir(onTestFinished);
    const capture = captureLog();
    const audit = await AuditLog.open(dataDir, capture.log);
    audit.record({ callId: 'c1', tool: 'weather', caller: 'ci', capability: 'net', target: 'api.example.com:443', allowed: true });
    audit.record({ callId: 'c1', tool: 'weather', caller: 'ci', capability: 'read', target: '/etc/passwd', allowed: false, reason: 'not granted' });
    await audit.close();
    const lines = (await readFile(audit.file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({ callId: 'c1', capability: 'net', target: 'api.example.com:443', allowed: true, time: expect.any(String) }),
      expect.objectContaining({ capability: 'read', target: '/etc/passwd', allowed: false, reason: 'not granted' }),
    ]);
    expect((await stat(audit.file)).mode & 0o777).toBe(0o600);
    expect(capture.records()).toContainEqual(expect.objectContaining({ msg: 'capability denied', level: 'warn' }));
  });
});
