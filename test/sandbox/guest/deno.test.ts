/**
 * Pins: the Deno namespace subset sends the host exactly the op arguments of sandbox/protocol.ts,
 * shapes results as Deno does (FileInfo dates, DirEntry iteration, env), and rebuilds host
 * errors as Deno.errors classes. Nothing of Node is reachable.
 */
import { describe, expect, it } from 'vitest';
import { createGuest, evaluate, HostFailure, type GuestOptions } from './helpers/fake-host.ts';

async function withGuest<T>(options: GuestOptions, run: (guest: Awaited<ReturnType<typeof createGuest>>) => Promise<T>): Promise<T> {
  const guest = await createGuest(options);
  try {
    return await run(guest);
  } finally {
    guest.dispose();
  }
}

const files = new Map<string, Uint8Array>([['/work/notes.txt', new TextEncoder().encode('héllo')], ['/work/bad.bin', new Uint8Array([0x61, 0xff])]]);

const fsHost: GuestOptions = {
  async: {
    readFile: ({ path }) => {
      const data = files.get(path);
      if (data === undefined) throw new HostFailure('NotFound', `No such file or directory (os error 2): readfile '${path}'`);
      return data;
    },
    writeFile: () => null,
    readDir: () => [
      { name: 'a.txt', isFile: true, isDirectory: false, isSymlink: false },
      { name: 'sub', isFile: false, isDirectory: true, isSymlink: false },
    ],
    stat: ({ lstat }) => ({ isFile: !lstat, isDirectory: false, isSymlink: lstat, size: 5, mtime: 1000, atime: null, birthtime: 0, mode: 0o100644 }),
    mkdir: () => null,
    remove: () => { throw new HostFailure('NotCapable', 'Requires write access to "/etc", run again with the --allow-write flag'); },
    permissionsQuery: (descriptor) => ({ state: descriptor.name === 'net' ? 'granted' : 'prompt', partial: false }),
    sleep: () => new Promise(() => { /* never */ }),
  },
  sync: {
    envGet: ({ name }) => (name === 'WEATHER_KEY' ? 'k-123' : null),
    envToObject: () => ({ WEATHER_KEY: 'k-123' }),
    cwd: () => '/work',
  },
};

describe('Deno file system', () => {
  it('reads files as bytes and as text (lossy UTF-8), from paths and file URLs', async () => {
    await withGuest(fsHost, async (guest) => {
      const result = await evaluate(guest, `
        const bytes = await Deno.readFile("/work/notes.txt");
        return [bytes instanceof Uint8Array, bytes.length, await Deno.readTextFile(new URL("file:///work/notes.txt")), await Deno.readTextFile("/work/bad.bin")];`);
      expect(result).toEqual([true, 6, 'héllo', 'a\uFFFD']);
      expect(guest.requests.map((request) => request.args)).toEqual([{ path: '/work/notes.txt' }, { path: '/work/notes.txt' }, { path: '/work/bad.bin' }]);
    });
  });

  it('writes with Deno defaults and with every option', async () => {
    await withGuest(fsHost, async (guest) => {
      await evaluate(guest, `
        await Deno.writeTextFile("out.txt", "é");
        await Deno.writeFile("raw.bin", new Uint8Array([1, 2]), { append: true, create: false, createNew: true, mode: 0o600 });`);
      expect(guest.requests.map((request) => [request.op, request.args])).toEqual([
        ['writeFile', { path: 'out.txt', data: new Uint8Array([0xc3, 0xa9]), append: false, create: true, createNew: false, mode: null }],
        ['writeFile', { path: 'raw.bin', data: new Uint8Array([1, 2]), append: true, create: false, createNew: true, mode: 0o600 }],
      ]);
    });
  });

  it('lists directories as an async iterable of DirEntry and stats with Dates', async () => {
    await withGuest(fsHost, async (guest) => {
      const result = await evaluate(guest, `
        const names = [];
        for await (const entry of Deno.readDir("/work")) names.push([entry.name, entry.isFile, entry.isDirectory, entry.isSymlink]);
        const info = await Deno.stat("/work/notes.txt");
        const link = await Deno.lstat("/work/link");
        await Deno.mkdir("/work/new/deep", { recursive: true });
        return [names, info.isFile, info.size, info.mtime instanceof Date && info.mtime.getTime(), info.atime, info.birthtime.getTime(), info.mode, link.isSymlink];`);
      expect(result).toEqual([[['a.txt', true, false, false], ['sub', false, true, false]], true, 5, 1000, null, 0, 0o100644, true]);
      expect(guest.requests.slice(1).map((request) => [request.op, request.args])).toEqual([
        ['stat', { path: '/work/notes.txt', lstat: false }], ['stat', { path: '/work/link', lstat: true }],
        ['mkdir', { path: '/work/new/deep', recursive: true, mode: null }],
      ]);
    });
  });

  it('rebuilds host errors as Deno.errors instances with the exact message', async () => {
    await withGuest(fsHost, async (guest) => {
      const result = await evaluate(guest, `
        const out = [];
        try { await Deno.readTextFile("/work/missing"); } catch (e) { out.push([e instanceof Deno.errors.NotFound, e.name, e.message]); }
        try { await Deno.remove("/etc", { recursive: true }); } catch (e) { out.push([e instanceof Deno.errors.NotCapable, e.name, e.message]); }
        try { await Deno.readFile(new URL("https://x/")); } catch (e) { out.push([e.constructor.name, e.message]); }
        return out;`);
      expect(result).toEqual([
        [true, 'NotFound', "No such file or directory (os error 2): readfile '/work/missing'"],
        [true, 'NotCapable', 'Requires write access to "/etc", run again with the --allow-write flag'],
        ['TypeError', 'Must be a file URL.'],
      ]);
    });
  });

  it('cancels a read when its signal aborts', async () => {
    await withGuest({ async: { readFile: () => new Promise(() => { /* never */ }) } }, async (guest) => {
      const result = await evaluate(guest, `
        const controller = new AbortController();
        const pending = Deno.readFile("/slow", { signal: controller.signal });
        controller.abort(new Error("stop"));
        try { await pending; } catch (e) { return e.message; }`);
      expect(result).toBe('stop');
      expect(guest.cancelled).toEqual([1]);
    });
  });
});

describe('Deno env, cwd, permissions and errors', () => {
  it('reads env through the sync ops and validates keys as Deno does', async () => {
    await withGuest(fsHost, async (guest) => {
      const result = await evaluate(guest, `
        const out = [Deno.env.get("WEATHER_KEY"), Deno.env.get("OTHER"), Deno.env.has("WEATHER_KEY"), Deno.env.has("OTHER"), Deno.env.toObject(), Deno.cwd()];
        for (const key of ["", "A=B"]) { try { Deno.env.get(key); } catch (e) { out.push([e.constructor.name, e.message]); } }
        try { Deno.env.set("A", "1"); } catch (e) { out.push(e.name); }
        return out;`);
      expect(result).toEqual(['k-123', null, true, false, { WEATHER_KEY: 'k-123' }, '/work',
        ['TypeError', 'Key is an empty string.'], ['TypeError', 'Key contains invalid characters: "A=B"'], 'NotSupported']);
    });
  });

  it('answers permissions.query from the host', async () => {
    await withGuest(fsHost, async (guest) => {
      const result = await evaluate(guest, `
        const net = await Deno.permissions.query({ name: "net", host: "example.com" });
        const read = await Deno.permissions.query({ name: "read", path: new URL("file:///tmp") });
        let bad; try { await Deno.permissions.query({ name: "bogus" }); } catch (e) { bad = e.constructor.name; }
        return [net.state, net.partial, read.state, bad];`);
      expect(result).toEqual(['granted', false, 'prompt', 'TypeError']);
      expect(guest.requests.map((request) => request.args)).toEqual([{ name: 'net', host: 'example.com' }, { name: 'read', path: '/tmp' }]);
    });
  });

  it('offers every Deno.errors class as an Error subclass named after itself', async () => {
    await withGuest({}, async (guest) => {
      const result = await evaluate(guest, `
        return Object.entries(Deno.errors).filter(([name, E]) => { const e = new E("m"); return !(e instanceof Error) || e.name !== name || E.name !== name || e.message !== "m"; }).length
          + ":" + ["NotCapable", "NotFound", "AlreadyExists", "PermissionDenied", "IsADirectory", "NotADirectory", "InvalidData", "TimedOut", "Interrupted", "BadResource", "Http"].every((n) => typeof Deno.errors[n] === "function");`);
      expect(result).toBe('0:true');
    });
  });

  it('is frozen and nothing of Node is reachable', async () => {
    await withGuest({}, async (guest) => {
      const result = await evaluate(guest, `
        "use strict";
        let assigned; try { Deno.readFile = null; assigned = "yes"; } catch (e) { assigned = e.constructor.name; }
        return [assigned, Object.isFrozen(Deno), typeof require, typeof process, typeof Buffer, typeof global, typeof module, self === globalThis, Deno.version.deno];`);
      expect(result).toEqual(['TypeError', true, 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', true, '2.0.0']);
    });
  });
});
