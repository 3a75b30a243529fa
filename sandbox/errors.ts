/** How a sandboxed call can fail. Stable strings: they reach API clients as `error.kind`. */
export type CallErrorKind =
  | 'tool_error'
  | 'not_capable'
  | 'timeout'
  | 'memory_limit'
  | 'output_limit'
  | 'aborted'
  | 'crashed'
  | 'compile_error';

/** The sandbox layer's one error base: a stable `kind`, a message fit for the caller, structured details. */
export class CallError extends Error {
  readonly kind: CallErrorKind;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(kind: CallErrorKind, message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.kind = kind;
    this.details = details;
  }
}

/**
 * An error meant for guest code: only `name` (a Deno.errors class or a standard error name) and
 * `message` cross into the isolate. Capability code throws these; any other host error reaches the
 * guest as a generic message, so host paths, stacks and internals never leak.
 */
export class GuestError extends Error {
  readonly guestName: string;
  /** Rebuilt as the guest error's `cause` (Deno's fetch errors carry their detail there). */
  readonly guestCause: { name: string; message: string } | undefined;

  constructor(guestName: string, message: string, guestCause?: { name: string; message: string }) {
    super(message);
    this.name = new.target.name;
    this.guestName = guestName;
    this.guestCause = guestCause;
  }
}
