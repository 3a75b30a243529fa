import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { SSEMessage } from 'hono/streaming';
import type { AppEnv } from './env.ts';
import { ProblemError, asProblem, problemBody } from './problem.ts';
import type { InvokeResponseBody } from './schemas.ts';

/** What happens during a streamed invoke, in order: updates, then one result (or one error). */
export type InvokeEvent =
  | { type: 'tool-update'; text: string }
  | { type: 'tool-result'; result: InvokeResponseBody }
  | { type: 'stream-error'; problem: Record<string, unknown> };

/** The wire names of invoke events: the only place that knows them (SPEC §5: `update`, then one `result`). */
export function toSse(event: InvokeEvent): SSEMessage {
  switch (event.type) {
    case 'tool-update': return { event: 'update', data: JSON.stringify({ text: event.text }) };
    case 'tool-result': return { event: 'result', data: JSON.stringify(event.result) };
    case 'stream-error': return { event: 'error', data: JSON.stringify(event.problem) };
  }
}

/** Runs one call; `emit` receives its updates, `signal` aborts it. */
export type StreamedCall = (emit: (text: string) => void, signal: AbortSignal) => Promise<InvokeResponseBody>;

/**
 * Answers a call as a text/event-stream: `update` events as they happen, then one `result` event.
 *
 * The response (status 200) starts only once the call was admitted, so the refusals that come
 * before a call runs (unknown tool, invalid params or grants, overload) still answer with their
 * own status: the coordinator raises them synchronously or from settled promises, so every one
 * has rejected `start`'s promise before the next turn of the event loop. A client that goes away
 * (socket closed, stream cancelled) aborts the call.
 */
export async function streamInvoke(c: Context<AppEnv>, start: StreamedCall): Promise<Response> {
  const controller = new AbortController();
  const abort = (): void => { controller.abort(new DOMException('The client disconnected.', 'AbortError')); };
  c.req.raw.signal.addEventListener('abort', abort, { once: true });

  const early: InvokeEvent[] = [];
  let emit = (event: InvokeEvent): void => { early.push(event); };
  const call = start((text) => { emit({ type: 'tool-update', text }); }, controller.signal);
  try {
    await refusedBeforeNextTurn(call);
  } catch (error) {
    c.req.raw.signal.removeEventListener('abort', abort);
    throw error;
  }

  return streamSSE(c, async (stream) => {
    stream.onAbort(abort);
    let written = Promise.resolve();
    emit = (event) => { written = written.then(() => stream.writeSSE(toSse(event))); };
    for (const event of early) emit(event);
    try {
      emit({ type: 'tool-result', result: await call });
    } catch (error) {
      // Only a refusal later than the coordinator makes them today, or a bug: the status is sent, so it goes as an event.
      if (!(error instanceof ProblemError)) c.var.log.error({ err: error }, 'streamed call failed after it started');
      emit({ type: 'stream-error', problem: problemBody(c, asProblem(error)) });
    } finally {
      c.req.raw.signal.removeEventListener('abort', abort);
    }
    await written; // writes to a closed stream are dropped by hono, never thrown
  });
}

/** Rejects with `call`'s error if it has already failed by the next turn of the event loop; else resolves. */
function refusedBeforeNextTurn(call: Promise<unknown>): Promise<void> {
  return new Promise((resolve, reject) => {
    setImmediate(resolve);
    call.catch(reject);
  });
}
