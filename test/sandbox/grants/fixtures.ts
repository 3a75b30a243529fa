/** Shared by the grants and fs/env/permissions capability tests: temp workspaces, an audit sink, an identity. */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AuditRecord, AuditSink, CallIdentity } from '../../../sandbox/audit.ts';

export interface Workspace {
  /** Real path of a fresh temp folder. */
  readonly root: string;
  readonly cleanup: () => Promise<void>;
}

export async function makeWorkspace(): Promise<Workspace> {
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'paddock-grants-')));
  return { root, cleanup: () => rm(root, { recursive: true, force: true }) };
}

export interface RecordingSink extends AuditSink {
  readonly records: AuditRecord[];
}

export function recordingSink(): RecordingSink {
  const records: AuditRecord[] = [];
  return { records, record: (entry) => { records.push(entry); } };
}

export const IDENTITY: CallIdentity = Object.freeze({ callId: 'call-1', tool: 'fixture_tool', caller: 'ci', sessionId: 'session-1' });
