/** Deno's custom-inspect protocol: an object with this method decides how console shows it. */
export const customInspect: unique symbol = Symbol.for('Deno.customInspect') as never;

export type InspectFunction = (value: unknown) => string;
