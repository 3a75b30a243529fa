/**
 * Pins: a model request carries the newest part of the session's context that fits the budget,
 * cut only between whole units (an assistant turn stays with its tool results and the image
 * message after them), always at least the newest unit, with a note counting what was left out;
 * and the loop sends exactly that, while the session keeps everything.
 */
import { describe, expect, it } from 'vitest';
import { fitContext, omittedNotice } from '../../runtime/agent/context-window.ts';
import type { ContextMessage } from '../../runtime/agent/messages.ts';

const user = (text: string): ContextMessage => ({ role: 'user', content: text });
const assistant = (text: string): ContextMessage => ({ role: 'assistant', content: text });
const callTurn = (id: string, args: string): ContextMessage => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'echo', arguments: args } }] });
const result = (id: string, text: string): ContextMessage => ({ role: 'tool', tool_call_id: id, content: text });
const images: ContextMessage = { role: 'user', content: [{ type: 'text', text: 'images' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(50_000)}` } }] };

describe('fitContext', () => {
  const history: ContextMessage[] = [
    user('u1'.repeat(50)), assistant('a1'.repeat(50)),
    user('u2'.repeat(50)), callTurn('c1', '{"x":1}'), result('c1', 'r1'.repeat(100)), images,
    assistant('a2'.repeat(50)), user('u3'.repeat(50)),
  ];

  it('sends everything that fits', () => {
    expect(fitContext(history, 1_000_000)).toEqual({ messages: history, omitted: 0 });
  });

  it('drops the oldest whole units, never a tool result from its call or the images after them', () => {
    const fitted = fitContext(history, 4_500);
    // u3 (100) + a2 (100) + the call turn with its result and images (7 + 4 + 200 + 4000 + 6) fit; u2 does not.
    expect(fitted.omitted).toBe(3);
    expect(fitted.messages).toEqual(history.slice(3));
    expect(fitted.messages[0]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'c1' }] });
    const smaller = fitContext(history, 300);
    expect(smaller.messages).toEqual(history.slice(6));
    expect(smaller.messages.some((message) => message.role === 'tool')).toBe(false);
  });

  it('always sends the newest unit, even alone over the budget', () => {
    const long = [user('old'), user('x'.repeat(10_000))];
    expect(fitContext(long, 1_000)).toEqual({ messages: [long[1]], omitted: 1 });
  });

  it('says how many messages were left out', () => {
    expect(omittedNotice(1)).toEqual({ role: 'system', content: '[1 earlier message was left out of this request to fit the context window; the conversation continues from here.]' });
    expect(omittedNotice(3).content).toContain('3 earlier messages were left out');
  });
});
