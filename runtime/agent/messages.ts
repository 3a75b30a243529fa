/**
 * The two buffers of a session, as the agent loop writes them: the model context (chat-completion
 * messages, exactly what the model is sent next time) and the display history (what a person reads).
 * Plain JSON both, so the store keeps them as they are.
 */

export interface ContextToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

export type ContextContentPart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image_url'; readonly image_url: { readonly url: string } };

export type ContextMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string | readonly ContextContentPart[] }
  | { readonly role: 'assistant'; readonly content: string | null; readonly tool_calls?: readonly ContextToolCall[] }
  | { readonly role: 'tool'; readonly tool_call_id: string; readonly content: string };

export type DisplayEntry =
  | { readonly type: 'user'; readonly content: string }
  | { readonly type: 'assistant'; readonly content: string }
  | { readonly type: 'tool-call'; readonly callId: string; readonly tool: string; readonly arguments: string }
  | {
    readonly type: 'tool-result'; readonly callId: string; readonly tool: string; readonly ok: boolean; readonly content: string;
    readonly error?: { readonly kind: string; readonly message: string } | undefined; readonly durationMs: number;
    /** Media types of images the result added to the model context (the images themselves are not kept here). */
    readonly images?: readonly string[] | undefined;
  }
  | { readonly type: 'run-end'; readonly reason: string; readonly steps: number }
  | { readonly type: 'error'; readonly kind: string; readonly message: string };
