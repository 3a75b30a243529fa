/**
 * Worker-thread entry of checkInWorker (expectations.ts): answers each `{ output, expectation }`
 * message with the outcomes. It holds nothing but the copies it is sent.
 */
import { parentPort } from 'node:worker_threads';
import { checkExpectations } from './expectations.ts';
import type { Expectation } from './expectations.ts';

parentPort?.on('message', (message: { output: string; expectation: Expectation }) => {
  parentPort?.postMessage(checkExpectations(message.output, message.expectation));
});
