/**
 * Pins: every audit record lands as one JSON line (with a timestamp) in <data>/audit.jsonl, mode
 * 0600; denials are also logged as warnings. Both outlets are bounded against a tool that hammers
 * its capabilities: the file rotates by size keeping a fixed number of old files (no record lost
 * among those kept), and denial warnings are limited per minute with a count of the rest.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
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

  it('rotates at its size, keeps the configured number of old files and loses no record among them', async ({ onTestFinished }) => {
    const dataDir = await tempDir(onTestFinished);
    const capture = captureLog();
    const audit = await AuditLog.open(dataDir, capture.log, { maxFileBytes: 2_000, keepFiles: 2 });
    const record = (index: number) => ({ callId: `c${index}`, tool: 'hammer', caller: 'ci', capability: 'env' as const, target: `VAR_${index}`, allowed: true });
    for (let index = 0; index < 60; index++) audit.record(record(index));
    await audit.close();
    const files = (await readdir(dataDir)).filter((name) => name.startsWith('audit')).sort();
    expect(files).toEqual(['audit.1.jsonl', 'audit.2.jsonl', 'audit.jsonl']);
    const read = async (name: string) => (await readFile(`${dataDir}/${name}`, 'utf8')).trim().split('\n').map((line) => (JSON.parse(line) as { callId: string }).callId);
    const kept = [...await read('audit.2.jsonl'), ...await read('audit.1.jsonl'), ...await read('audit.jsonl')];
    for (const name of files) {
      expect((await stat(`${dataDir}/${name}`)).size).toBeLessThanOrEqual(2_000);
      expect((await stat(`${dataDir}/${name}`)).mode & 0o777).toBe(0o600);
    }
    // The newest records, in order, without a gap: the oldest files were overwritten, nothing else lost.
    const last = kept.map((id) => Number(id.slice(1)));
    expect(last.at(-1)).toBe(59);
    expect(last).toEqual(Array.from({ length: last.length }, (_, offset) => 60 - last.length + offset));
    expect(last.length).toBeGreaterThan(15);
  });

  it('logs at most the configured denials a minute as warnings, then counts the rest once', async ({ onTestFinished }) => {
    const dataDir = await tempDir(onTestFinished);
    const capture = captureLog();
    let now = 1_000_000;
    const audit = await AuditLog.open(dataDir, capture.log, { deniedWarningsPerMinute: 3, now: () => now });
    const denial = { callId: 'c', tool: 'probe', caller: 'ci', capability: 'read' as const, target: '/etc/shadow', allowed: false };
    for (let index = 0; index < 10; index++) audit.record(denial);
    expect(capture.records().filter((entry) => entry['msg'] === 'capability denied')).toHaveLength(3);
    now += 60_000;
    audit.record(denial);
    await audit.close();
    const warnings = capture.records().filter((entry) => entry['level'] === 'warn');
    expect(warnings.map((entry) => entry['msg'])).toEqual([
      'capability denied', 'capability denied', 'capability denied',
      '7 more capability denials were not logged here; the audit file has every one',
      'capability denied',
    ]);
    expect((await readFile(audit.file, 'utf8')).trim().split('\n')).toHaveLength(11);
  });

  it('writes the count of unlogged denials when the minute ends, even if no denial follows', async ({ onTestFinished }) => {
    const dataDir = await tempDir(onTestFinished);
    const capture = captureLog();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => { vi.useRealTimers(); });
    const audit = await AuditLog.open(dataDir, capture.log, { deniedWarningsPerMinute: 1, now: () => 5_000 });
    const denial = { callId: 'c', tool: 'probe', caller: 'ci', capability: 'net' as const, target: '10.0.0.1:80', allowed: false };
    for (let index = 0; index < 3; index++) audit.record(denial);
    vi.advanceTimersByTime(59_999);
    expect(capture.records().filter((entry) => entry['level'] === 'warn')).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(capture.records().filter((entry) => entry['level'] === 'warn').map((entry) => entry['msg']))
      .toEqual(['capability denied', '2 more capability denials were not logged here; the audit file has every one']);
    await audit.close();
  });
});
