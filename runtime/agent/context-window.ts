import type { ContextMessage } from './messages.ts';

/**
 * What an image part counts for: its data URL's length says nothing about the tokens a model
 * charges for it (a fixed price per tile), so it is counted as a modest constant.
 */
const IMAGE_CHARS = 4_000;

export interface FittedContext {
  readonly messages: readonly ContextMessage[];
  /** Messages of the session's context left out of this request (the oldest ones). */
  readonly omitted: number;
}

/**
 * The newest part of a session's context that fits `budgetChars`, for one model request. The
 * session keeps its whole context; only what is sent is cut. Messages are dropped oldest first in
 * whole units, never splitting an assistant message from the tool results that answer its calls
 * (or the image message that follows them), so the request stays one the API accepts. The newest
 * unit is always sent, even alone over the budget: the model, not Paddock, is the judge of that.
 */
export function fitContext(messages: readonly ContextMessage[], budgetChars: number): FittedContext {
  const units = unitsOf(messages);
  let used = 0;
  let first = units.length;
  while (first > 0) {
    const unit = units[first - 1];
    if (unit === undefined) break;
    if (first < units.length && used + unit.chars > budgetChars) break;
    used += unit.chars;
    first--;
  }
  if (first === 0) return { messages, omitted: 0 };
  const start = units[first]?.start ?? messages.length;
  return { messages: messages.slice(start), omitted: start };
}

/** A note for the model that older messages were left out, so it does not take the cut for the start. */
export function omittedNotice(omitted: number): ContextMessage {
  return {
    role: 'system',
    content: `[${omitted} earlier message${omitted === 1 ? ' was' : 's were'} left out of this request to fit the context window; the conversation continues from here.]`,
  };
}

interface Unit {
  readonly start: number;
  readonly chars: number;
}

/** Consecutive messages that must travel together: an assistant turn with its tool results (and images), or a single message. */
function unitsOf(messages: readonly ContextMessage[]): Unit[] {
  const units: Unit[] = [];
  let index = 0;
  while (index < messages.length) {
    const start = index;
    const message = messages[index];
    let chars = sizeOf(message);
    index++;
    if (message?.role === 'assistant' && message.tool_calls !== undefined && message.tool_calls.length > 0) {
      while (messages[index]?.role === 'tool') chars += sizeOf(messages[index++]);
      // Images a batch of tool results returned ride in one user message right after them.
      const next = messages[index];
      if (next?.role === 'user' && typeof next.content !== 'string') chars += sizeOf(messages[index++]);
    }
    units.push({ start, chars });
  }
  return units;
}

function sizeOf(message: ContextMessage | undefined): number {
  if (message === undefined) return 0;
  switch (message.role) {
    case 'system':
    case 'tool':
      return message.content.length;
    case 'user':
      if (typeof message.content === 'string') return message.content.length;
      return message.content.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : IMAGE_CHARS), 0);
    case 'assistant':
      return (message.content ?? '').length
        + (message.tool_calls ?? []).reduce((sum, call) => sum + call.function.name.length + call.function.arguments.length, 0);
  }
}
