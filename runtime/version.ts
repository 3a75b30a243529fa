import { readFileSync } from 'node:fs';

/** The version in package.json, read once. */
export const PADDOCK_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
