/** Deno's custom-inspect protocol: an object with this method decides how console shows it. */
import { MapPrototypeGet, MapPrototypeSet, ObjectCreate, ObjectDefineProperty, ObjectKeys, SafeMap } from './primordials.ts';

export const customInspect: unique symbol = Symbol.for('Deno.customInspect') as never;

export type InspectFunction = (value: unknown) => string;

const prototypes = new SafeMap<string, object>();

/**
 * A plain record that console shows as `Name { ... }`. Returning `inspect(named(...))` rather than
 * `Name ${inspect(...)}` lets the line-breaking rules count the name, as Deno's do.
 */
export function named(name: string, record: Record<string, unknown>): object {
  let proto = MapPrototypeGet(prototypes, name);
  if (proto === undefined) {
    const constructor = function (): void { /* only a name for console */ };
    ObjectDefineProperty(constructor, 'name', { value: name });
    proto = ObjectCreate(null, { constructor: { value: constructor } }) as object;
    MapPrototypeSet(prototypes, name, proto);
  }
  const shown = ObjectCreate(proto) as Record<string, unknown>;
  const keys = ObjectKeys(record);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    ObjectDefineProperty(shown, key, { value: record[key], enumerable: true, writable: true, configurable: true });
  }
  return shown;
}
