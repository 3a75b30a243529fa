/**
 * The fake model of the agent-loop benchmark: answers at once, step n of a run calling the
 * benchmark tool and the last step answering with text. Run as a worker thread (--model-thread),
 * it starts the fake server and posts its base URL.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { startFakeOpenAI } from '../test/helpers/fake-openai.ts';
import type { Responder } from '../test/helpers/fake-openai.ts';

/** Step n of a run sends 2n - 1 messages (the user's, then an assistant and a tool message per step). */
export function benchResponder(steps: number, tool: string): Responder {
  return (request) => {
    const step = (request.body.messages.length + 1) / 2;
    return step >= steps ? { text: 'done' } : { toolCalls: [{ id: `call_${step}`, name: tool, arguments: { n: step } }] };
  };
}

if (!isMainThread && parentPort !== null) {
  const port = parentPort;
  const { steps, tool } = workerData as { steps: number; tool: string };
  const fake = await startFakeOpenAI();
  fake.fallback(benchResponder(steps, tool));
  port.on('message', (message: unknown) => {
    if (message === 'close') void fake.close().then(() => { port.close(); });
  });
  port.postMessage(fake.url);
}
