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
