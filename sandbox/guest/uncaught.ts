/**
 * Errors thrown where no caller can catch them (timer callbacks, event listeners). Deno ends the
 * program with such an error; here it ends the running invocation with it.
 */
let handler: ((error: unknown) => void) | null = null;
let first: { error: unknown } | null = null;

export function reportUncaught(error: unknown): void {
  if (handler !== null) handler(error);
  else first ??= { error };
}

/** Installs the invocation's handler; an error reported before it exists is delivered at once. */
export function onUncaught(listener: (error: unknown) => void): void {
  handler = listener;
  if (first !== null) {
    const { error } = first;
    first = null;
    listener(error);
  }
}
