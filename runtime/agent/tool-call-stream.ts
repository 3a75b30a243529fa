/** Accumulates streamed tool-call deltas (by index) into whole calls with their JSON argument text. */

export interface ToolCallDelta {
  readonly index: number;
  readonly id?: string | undefined;
  readonly function?: { readonly name?: string | undefined; readonly arguments?: string | undefined } | undefined;
}

export interface AssembledToolCall {
  readonly id: string;
  readonly name: string;
  /** The raw argument text as the model sent it (parsed, and refused when malformed, at execution). */
  readonly arguments: string;
}

export class ToolCallStream {
  readonly #calls = new Map<number, { id: string; name: string; arguments: string }>();

  push(delta: ToolCallDelta): void {
    let call = this.#calls.get(delta.index);
    if (call === undefined) {
      call = { id: '', name: '', arguments: '' };
      this.#calls.set(delta.index, call);
    }
    if (delta.id !== undefined && delta.id !== '' && call.id === '') call.id = delta.id;
    const name = delta.function?.name;
    // Names arrive whole in practice; some servers repeat the name on every chunk.
    if (name !== undefined && name !== '' && name !== call.name) call.name += name;
    if (delta.function?.arguments !== undefined) call.arguments += delta.function.arguments;
  }

  /** The calls in index order; a call the server sent without an id gets a stable one. */
  finish(): AssembledToolCall[] {
    return [...this.#calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => ({
      id: call.id === '' ? `call_${index}` : call.id, name: call.name, arguments: call.arguments,
    }));
  }
}

/** Parses a tool call's argument text: an empty text is `{}`; anything but a JSON object is refused. */
export function parseArguments(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; detail: string } {
  if (text.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, detail: error instanceof Error ? error.message : String(error) };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, detail: `found ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
