import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A hard memory ceiling per sandbox worker, enforced by the kernel: each worker is moved into its
 * own memory cgroup whose limit is the worker's ceiling. Without one, the supervisor's RSS watch
 * (sandbox/pool/worker-pool.ts) polls every 250 ms, and a process can allocate gigabytes in that
 * time; the cgroup stops it at the limit, and the kernel's OOM killer then takes that worker and
 * nothing else. Needs a cgroup directory this service may write: its own memory cgroup on cgroup v1
 * (found from /proc/self/cgroup), or on cgroup v2 a directory the operator delegated (no
 * processes of its own; the service enables the memory controller for its children).
 */

/** What the service uses for workers' memory: `auto` finds a writable cgroup, `off` keeps only the RSS watch, or a cgroup directory. */
export type MemoryCgroupSetting = string;

export interface WorkerCgroup {
  readonly path: string;
  /** Times the kernel's OOM killer stopped a process in this cgroup. */
  oomKills(): number;
  /** Removes the cgroup once its worker has exited (the kernel may hold it busy for a moment). */
  remove(): Promise<void>;
}

export interface MemoryCgroups {
  readonly version: 1 | 2;
  /** The directory the workers' cgroups are made in. */
  readonly base: string;
  /** Moves a worker into a new cgroup limited to `limitMiB`; throws if the kernel refuses. */
  place(pid: number, limitMiB: number): WorkerCgroup;
}

export type MemoryCgroupsResult = { ok: true; cgroups: MemoryCgroups } | { ok: false; reason: string };

const CGROUP_ROOT = '/sys/fs/cgroup';
let probes = 0;

/** The cgroups to place workers in, or why there are none (the RSS watch still applies). */
export function openMemoryCgroups(setting: MemoryCgroupSetting): MemoryCgroupsResult {
  if (setting === 'off') return { ok: false, reason: 'turned off by sandbox.memoryCgroup' };
  if (process.platform !== 'linux') return { ok: false, reason: 'cgroups exist only on Linux' };
  const base = setting === 'auto' ? ownMemoryCgroup() : setting;
  if (base === undefined) return { ok: false, reason: 'no cgroup v1 memory controller for this process (on cgroup v2, set sandbox.memoryCgroup to a delegated directory)' };
  if (!path.isAbsolute(base)) return { ok: false, reason: `sandbox.memoryCgroup must be an absolute path, got "${base}"` };
  try {
    if (existsSync(path.join(base, 'memory.limit_in_bytes'))) return { ok: true, cgroups: cgroupsIn(base, 1) };
    if (existsSync(path.join(base, 'cgroup.controllers'))) {
      enableMemoryForChildren(base);
      return { ok: true, cgroups: cgroupsIn(base, 2) };
    }
    return { ok: false, reason: `${base} is not a memory cgroup` };
  } catch (error) {
    return { ok: false, reason: `${base}: ${errorText(error)}` };
  }
}

/** This process's cgroup v1 memory directory, when the memory hierarchy is mounted under /sys/fs/cgroup/memory. */
function ownMemoryCgroup(): string | undefined {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  } catch {
    return undefined;
  }
  for (const line of lines) {
    const [, controllers, relative] = line.split(':');
    if (controllers === undefined || relative === undefined) continue;
    if (!controllers.split(',').includes('memory')) continue;
    const directory = path.join(CGROUP_ROOT, 'memory', relative);
    return existsSync(path.join(directory, 'memory.limit_in_bytes')) ? directory : undefined;
  }
  return undefined;
}

/** cgroup v2: children get memory limits only if the parent enables the controller for them. */
function enableMemoryForChildren(base: string): void {
  const enabled = readFileSync(path.join(base, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
  if (enabled.includes('memory')) return;
  if (!readFileSync(path.join(base, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')) {
    throw new Error('the memory controller is not available there');
  }
  writeFileSync(path.join(base, 'cgroup.subtree_control'), '+memory');
}

function cgroupsIn(base: string, version: 1 | 2): MemoryCgroups {
  // Prove it is writable now, not at the first worker: made and removed at once.
  const probe = path.join(base, `paddock-probe-${process.pid}-${++probes}`);
  mkdirSync(probe);
  rmdirSync(probe);
  sweepStale(base);
  return {
    version,
    base,
    place(pid, limitMiB) {
      // Named by the worker's pid, unique among live processes; one left by a dead namesake is empty.
      const directory = path.join(base, `paddock-worker-${pid}`);
      tryRemove(directory);
      mkdirSync(directory);
      try {
        const bytes = String(limitMiB * 1_048_576);
        if (version === 1) {
          writeFileSync(path.join(directory, 'memory.limit_in_bytes'), bytes);
          // Swap would let the worker grow past the limit; absent when the kernel accounts no swap.
          tryWrite(path.join(directory, 'memory.memsw.limit_in_bytes'), bytes);
        } else {
          writeFileSync(path.join(directory, 'memory.max'), bytes);
          tryWrite(path.join(directory, 'memory.swap.max'), '0');
        }
        writeFileSync(path.join(directory, 'cgroup.procs'), String(pid));
      } catch (error) {
        tryRemove(directory);
        throw error;
      }
      return {
        path: directory,
        oomKills: () => oomKills(directory, version),
        remove: () => removeWhenEmpty(directory),
      };
    },
  };
}

function oomKills(directory: string, version: 1 | 2): number {
  try {
    const text = readFileSync(path.join(directory, version === 1 ? 'memory.oom_control' : 'memory.events'), 'utf8');
    const match = /^oom_kill (\d+)$/m.exec(text);
    return match?.[1] === undefined ? 0 : Number(match[1]);
  } catch {
    return 0;
  }
}

/** Right after its worker exits the kernel may still hold the cgroup busy: try again for up to ~1 s. */
async function removeWhenEmpty(directory: string): Promise<void> {
  for (let attempt = 0; attempt < 20 && !tryRemove(directory); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Cgroups of workers whose process is gone (a service that died before removing them). */
function sweepStale(base: string): void {
  for (const name of readdirSync(base)) {
    const pid = /^paddock-worker-(\d+)$/.exec(name)?.[1];
    if (pid !== undefined && !existsSync(`/proc/${pid}`)) tryRemove(path.join(base, name));
  }
}

function tryRemove(directory: string): boolean {
  try {
    rmdirSync(directory);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

function tryWrite(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch {
    // optional knob
  }
}

function errorText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'not writable by this service';
  if (code === 'ENOENT') return 'no such cgroup directory';
  return error instanceof Error ? error.message : String(error);
}
