import type { AsyncOp, SyncOp } from '../protocol.ts';

/**
 * Shape checks for arguments arriving from the guest. They are copies made by isolated-vm, so no
 * getters or proxies run, but their shape is whatever the guest chose: handlers may rely on the
 * protocol types only after this check.
 */
type FieldType = 'string' | 'number' | 'boolean' | 'bytes' | 'bytes?' | 'number?' | 'string?' | 'headers' | 'redirect';
type Shape = Readonly<Record<string, FieldType>>;

const SHAPES: Readonly<Record<AsyncOp | SyncOp, Shape>> = {
  fetch: { url: 'string', method: 'string', headers: 'headers', body: 'bytes?', redirect: 'redirect' },
  readFile: { path: 'string' },
  writeFile: { path: 'string', data: 'bytes', append: 'boolean', create: 'boolean', createNew: 'boolean', mode: 'number?' },
  readDir: { path: 'string' },
  stat: { path: 'string', lstat: 'boolean' },
  mkdir: { path: 'string', recursive: 'boolean', mode: 'number?' },
  remove: { path: 'string', recursive: 'boolean' },
  permissionsQuery: { name: 'string', host: 'string?', path: 'string?', variable: 'string?' },
  sleep: { ms: 'number' },
  update: { text: 'string' },
  envGet: { name: 'string' },
  envToObject: {},
  cwd: {},
  randomBytes: { length: 'number' },
  log: { level: 'string', text: 'string' },
};

/** Returns a description of the first mismatch, or undefined when `args` fits the op's shape. */
export function checkOpArgs(op: string, args: unknown): string | undefined {
  const shape = Object.hasOwn(SHAPES, op) ? SHAPES[op as AsyncOp | SyncOp] : undefined;
  if (shape === undefined) return `Unknown host operation "${op}".`;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return `Invalid arguments for "${op}": expected an object.`;
  const record = args as Record<string, unknown>;
  for (const [field, type] of Object.entries(shape)) {
    if (!fits(record[field], type)) return `Invalid arguments for "${op}": "${field}" must be ${type.replace('?', ' or null')}.`;
  }
  return undefined;
}

function fits(value: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string': return typeof value === 'string';
    case 'string?': return value === undefined || value === null || typeof value === 'string';
    case 'number': return typeof value === 'number' && Number.isFinite(value);
    case 'number?': return value === undefined || value === null || (typeof value === 'number' && Number.isFinite(value));
    case 'boolean': return typeof value === 'boolean';
    case 'bytes': return value instanceof Uint8Array;
    case 'bytes?': return value === null || value === undefined || value instanceof Uint8Array;
    case 'redirect': return value === 'follow' || value === 'manual' || value === 'error';
    case 'headers':
      return Array.isArray(value) && value.length <= 1000 && value.every((pair) =>
        Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string');
  }
}
