/** Event, EventTarget, CustomEvent, AbortController and AbortSignal (no DOM tree: dispatch reaches the target only). */
import { DOMException, abortError } from './errors.ts';
import { customInspect, named, type InspectFunction } from './inspect-hook.ts';
import {
  ArrayPrototypeSlice, ObjectDefineProperty, ReflectApply, TypeErrorCtor, push, ArrayPrototypeSplice,
  SymbolToStringTag, toDOMString, toBoolean,
} from './primordials.ts';
import { setTimeout } from './timers.ts';
import { reportUncaught } from './uncaught.ts';


let beginDispatch: (event: Event, target: EventTarget) => void;
let endDispatch: (event: Event) => void;
let stoppedImmediately: (event: Event) => boolean;
let markTrusted: (event: Event) => Event;

interface EventInitOptions { bubbles?: boolean; cancelable?: boolean; composed?: boolean }

export class Event {
  static readonly NONE = 0;
  static readonly CAPTURING_PHASE = 1;
  static readonly AT_TARGET = 2;
  static readonly BUBBLING_PHASE = 3;

  readonly #type: string;
  readonly #bubbles: boolean;
  readonly #cancelable: boolean;
  readonly #composed: boolean;
  readonly #timeStamp: number;
  #defaultPrevented = false;
  #target: EventTarget | null = null;
  #currentTarget: EventTarget | null = null;
  #phase = 0;
  #stop = false;
  #stopImmediate = false;
  #dispatching = false;
  #trusted = false;

  constructor(type: string, init: EventInitOptions = {}) {
    if (arguments.length === 0) throw new TypeErrorCtor("Failed to construct 'Event': 1 argument required, but only 0 present.");
    this.#type = toDOMString(type);
    this.#bubbles = toBoolean(init.bubbles);
    this.#cancelable = toBoolean(init.cancelable);
    this.#composed = toBoolean(init.composed);
    this.#timeStamp = 0; // as Deno reports it for events made in script
  }

  get type(): string { return this.#type; }
  get bubbles(): boolean { return this.#bubbles; }
  get cancelable(): boolean { return this.#cancelable; }
  get composed(): boolean { return this.#composed; }
  get timeStamp(): number { return this.#timeStamp; }
  get defaultPrevented(): boolean { return this.#defaultPrevented; }
  get target(): EventTarget | null { return this.#target; }
  get srcElement(): EventTarget | null { return this.#target; }
  get currentTarget(): EventTarget | null { return this.#currentTarget; }
  get eventPhase(): number { return this.#phase; }
  /** True only for events the runtime itself dispatches (an AbortSignal's `abort`), as in Deno. */
  get isTrusted(): boolean { return this.#trusted; }
  get returnValue(): boolean { return !this.#defaultPrevented; }
  get cancelBubble(): boolean { return this.#stop; }
  set cancelBubble(value: boolean) { if (value) this.#stop = true; }

  preventDefault(): void { if (this.#cancelable) this.#defaultPrevented = true; }
  stopPropagation(): void { this.#stop = true; }
  stopImmediatePropagation(): void { this.#stop = true; this.#stopImmediate = true; }
  composedPath(): EventTarget[] { return this.#dispatching && this.#currentTarget !== null ? [this.#currentTarget] : []; }

  [customInspect](inspect: InspectFunction): string {
    return inspect(named(toDOMString(this.constructor.name), {
      bubbles: this.#bubbles, cancelable: this.#cancelable, composed: this.#composed, currentTarget: this.#currentTarget,
      defaultPrevented: this.#defaultPrevented, eventPhase: this.#phase, srcElement: this.#target, target: this.#target,
      returnValue: !this.#defaultPrevented, timeStamp: this.#timeStamp, type: this.#type,
    }));
  }

  // Dispatch state lives in private fields; only dispatchEvent below may touch it.
  static {
    beginDispatch = (event: Event, target: EventTarget): void => {
      if (event.#dispatching) throw new DOMException('The event is already being dispatched.', 'InvalidStateError');
      event.#dispatching = true;
      event.#target = target;
      event.#currentTarget = target;
      event.#phase = 2;
      event.#stop = false;
      event.#stopImmediate = false;
    };
    endDispatch = (event: Event): void => {
      event.#dispatching = false;
      event.#currentTarget = null;
      event.#phase = 0;
    };
    stoppedImmediately = (event: Event): boolean => event.#stopImmediate;
    markTrusted = (event: Event): Event => {
      event.#trusted = true;
      return event;
    };
  }
}
ObjectDefineProperty(Event.prototype, SymbolToStringTag, { value: 'Event', configurable: true });


export class CustomEvent<T = unknown> extends Event {
  readonly #detail: T | null;
  constructor(type: string, init: EventInitOptions & { detail?: T } = {}) {
    super(type, init);
    this.#detail = init.detail ?? null;
  }
  get detail(): T | null { return this.#detail; }
}

type Listener = ((event: Event) => unknown) | { handleEvent: (event: Event) => unknown };
interface Registration { type: string; listener: Listener; capture: boolean; once: boolean; removed: boolean }
type ListenerOptions = boolean | { capture?: boolean; once?: boolean; passive?: boolean; signal?: AbortSignal };

export class EventTarget {
  #listeners: Registration[] = [];

  addEventListener(type: string, listener: Listener | null | undefined, options: ListenerOptions = {}): void {
    if (listener === null || listener === undefined) return;
    const capture = typeof options === 'boolean' ? options : toBoolean(options.capture);
    const once = typeof options === 'boolean' ? false : toBoolean(options.once);
    const signal = typeof options === 'boolean' ? undefined : options.signal;
    if (signal !== undefined && signal.aborted) return;
    const list = this.#listeners;
    for (let i = 0; i < list.length; i++) {
      const entry = list[i] as Registration;
      if (entry.type === toDOMString(type) && entry.listener === listener && entry.capture === capture) return;
    }
    const registration: Registration = { type: toDOMString(type), listener, capture, once, removed: false };
    push(list, registration);
    if (signal !== undefined) {
      signal.addEventListener('abort', () => { this.removeEventListener(type, listener, { capture }); });
    }
  }

  removeEventListener(type: string, listener: Listener | null, options: boolean | { capture?: boolean } = {}): void {
    const capture = typeof options === 'boolean' ? options : toBoolean(options.capture);
    const list = this.#listeners;
    for (let i = 0; i < list.length; i++) {
      const entry = list[i] as Registration;
      if (entry.type === toDOMString(type) && entry.listener === listener && entry.capture === capture) {
        entry.removed = true;
        ArrayPrototypeSplice(list, i, 1);
        return;
      }
    }
  }

  dispatchEvent(event: Event): boolean {
    if (!(event instanceof Event)) throw new TypeErrorCtor("Failed to execute 'dispatchEvent' on 'EventTarget': parameter 1 is not of type 'Event'.");
    beginDispatch(event, this);
    try {
      // A snapshot: listeners added during dispatch do not run for this event.
      const list = ArrayPrototypeSlice(this.#listeners);
      for (let i = 0; i < list.length; i++) {
        const entry = list[i] as Registration;
        if (entry.removed || entry.type !== event.type) continue;
        if (entry.once) this.removeEventListener(entry.type, entry.listener, { capture: entry.capture });
        try {
          const listener = entry.listener;
          if (typeof listener === 'function') ReflectApply(listener, this, [event]);
          else ReflectApply(listener.handleEvent, listener, [event]);
        } catch (error) {
          reportUncaught(error);
        }
        if (stoppedImmediately(event)) break;
      }
    } finally {
      endDispatch(event);
    }
    return !event.defaultPrevented;
  }
}
ObjectDefineProperty(EventTarget.prototype, SymbolToStringTag, { value: 'EventTarget', configurable: true });

// AbortSignal can only be made by the runtime (the constructor throws for user code, as on the Web).
let creatingSignal = false;
export let signalAbort: (signal: AbortSignal, reason: unknown) => void;

export class AbortSignal extends EventTarget {
  #aborted = false;
  #reason: unknown = undefined;
  #onabort: ((event: Event) => unknown) | null = null;
  #followers: AbortSignal[] = [];

  constructor() {
    if (!creatingSignal) throw new TypeErrorCtor('Illegal constructor.');
    super();
    creatingSignal = false;
  }

  get aborted(): boolean { return this.#aborted; }
  get reason(): unknown { return this.#reason; }
  get onabort(): ((event: Event) => unknown) | null { return this.#onabort; }
  set onabort(handler: ((event: Event) => unknown) | null) {
    if (this.#onabort !== null) this.removeEventListener('abort', this.#onabort);
    this.#onabort = typeof handler === 'function' ? handler : null;
    if (this.#onabort !== null) this.addEventListener('abort', this.#onabort);
  }

  throwIfAborted(): void {
    if (this.#aborted) throw this.#reason;
  }

  [customInspect](inspect: InspectFunction): string {
    return inspect(named('AbortSignal', { aborted: this.#aborted, reason: this.#reason, onabort: this.#onabort }));
  }

  static abort(reason?: unknown): AbortSignal {
    const signal = createSignal();
    signalAbort(signal, reason === undefined ? abortError() : reason);
    return signal;
  }

  static timeout(ms: number): AbortSignal {
    const signal = createSignal();
    setTimeout(() => { signalAbort(signal, new DOMException('The operation was aborted due to timeout', 'TimeoutError')); }, ms);
    return signal;
  }

  static any(signals: Iterable<AbortSignal>): AbortSignal {
    const signal = createSignal();
    const list: AbortSignal[] = [];
    for (const source of signals) {
      if (!(source instanceof AbortSignal)) throw new TypeErrorCtor("Failed to execute 'AbortSignal.any': Argument 1 is not a sequence of AbortSignal");
      push(list, source);
    }
    for (let i = 0; i < list.length; i++) {
      const source = list[i] as AbortSignal;
      if (source.aborted) {
        signalAbort(signal, source.reason);
        return signal;
      }
    }
    for (let i = 0; i < list.length; i++) push((list[i] as AbortSignal).#followers, signal);
    return signal;
  }

  static {
    // Marks the signal aborted, runs its abort listeners, then aborts the signals that follow it.
    signalAbort = (signal: AbortSignal, reason: unknown): void => {
      if (signal.#aborted) return;
      signal.#aborted = true;
      signal.#reason = reason;
      const followers = signal.#followers;
      signal.#followers = [];
      signal.dispatchEvent(markTrusted(new Event('abort')));
      for (let i = 0; i < followers.length; i++) signalAbort(followers[i] as AbortSignal, reason);
    };
  }
}
ObjectDefineProperty(AbortSignal.prototype, SymbolToStringTag, { value: 'AbortSignal', configurable: true });

export function createSignal(): AbortSignal {
  creatingSignal = true;
  try {
    return new AbortSignal();
  } finally {
    creatingSignal = false;
  }
}


export class AbortController {
  readonly #signal = createSignal();
  get signal(): AbortSignal { return this.#signal; }
  abort(reason?: unknown): void {
    signalAbort(this.#signal, reason === undefined ? abortError() : reason);
  }

  [customInspect](inspect: InspectFunction): string {
    return inspect(named('AbortController', { signal: this.#signal }));
  }
}
ObjectDefineProperty(AbortController.prototype, SymbolToStringTag, { value: 'AbortController', configurable: true });
