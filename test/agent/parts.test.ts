/**
 * Pins the loop's pure parts: stop conditions as predicates over steps; streamed tool-call deltas
 * assembled by index whatever order and repetition the server uses; argument text parsed strictly
 * to a JSON object; images recognised only in the documented metadata shapes and stripped from
 * what is shown; every failure text the model reads ends with a next step.
 */
import { describe, expect, it } from 'vitest';
import { imagesOf, withoutImages } from '../../runtime/agent/images.ts';
import { allResultsTerminate, hasNoToolCalls, isStepLimit } from '../../runtime/agent/stop-conditions.ts';
import type { StepResult } from '../../runtime/agent/stop-conditions.ts';
import { ToolCallStream, parseArguments } from '../../runtime/agent/tool-call-stream.ts';
import { failureText, invalidArgumentsText, unknownToolText } from '../../runtime/agent/tool-messages.ts';

const step = (calls: number, terminate: boolean[] = []): StepResult => ({
  toolCalls: Array.from({ length: calls }, (_value, index) => ({ id: `c${index}` })),
  toolResults: terminate.map((value) => ({ terminate: value })),
});

describe('stop conditions', () => {
  it('hasNoToolCalls looks at the last step only', () => {
    expect(hasNoToolCalls({ steps: [step(2), step(0)] })).toBe(true);
    expect(hasNoToolCalls({ steps: [step(0), step(1)] })).toBe(false);
    expect(hasNoToolCalls({ steps: [] })).toBe(true);
  });

  it('allResultsTerminate needs every result of the last batch, and at least one', () => {
    expect(allResultsTerminate({ steps: [step(2, [true, true])] })).toBe(true);
    expect(allResultsTerminate({ steps: [step(2, [true, false])] })).toBe(false);
    expect(allResultsTerminate({ steps: [step(1, [true]), step(0)] })).toBe(false);
  });

  it('isStepLimit counts steps', () => {
    expect(isStepLimit(2)({ steps: [step(1)] })).toBe(false);
    expect(isStepLimit(2)({ steps: [step(1), step(1)] })).toBe(true);
  });
});

describe('tool-call stream', () => {
  it('assembles interleaved pieces by index and keeps a repeated name once', () => {
    const stream = new ToolCallStream();
    stream.push({ index: 1, id: 'call_b', function: { name: 'second', arguments: '' } });
    stream.push({ index: 0, id: 'call_a', function: { name: 'first', arguments: '{"a"' } });
    stream.push({ index: 1, function: { name: 'second', arguments: '{}' } });
    stream.push({ index: 0, id: 'call_a', function: { arguments: ': 1}' } });
    stream.push({ index: 2, function: { name: 'third' } });
    expect(stream.finish()).toEqual([
      { id: 'call_a', name: 'first', arguments: '{"a": 1}' },
      { id: 'call_b', name: 'second', arguments: '{}' },
      { id: 'call_2', name: 'third', arguments: '' },
    ]);
  });

  it('parses arguments to an object only', () => {
    expect(parseArguments('')).toEqual({ ok: true, value: {} });
    expect(parseArguments('{"x": [1]}')).toEqual({ ok: true, value: { x: [1] } });
    expect(parseArguments('[1]')).toEqual({ ok: false, detail: 'found an array' });
    expect(parseArguments('"text"')).toEqual({ ok: false, detail: 'found string' });
    expect(parseArguments('{"x": ')).toMatchObject({ ok: false, detail: expect.stringContaining('JSON') });
  });
});

describe('images in tool results', () => {
  const png = 'iVBORw0KGgo=';

  it('are found as metadata.image or metadata.images, base64 or data URL', () => {
    expect(imagesOf({ image: { mediaType: 'image/png', data: png } })).toEqual([{ mediaType: 'image/png', url: `data:image/png;base64,${png}` }]);
    expect(imagesOf({ images: [{ mimeType: 'image/jpeg', data: png }, { url: `data:image/webp;base64,${png}` }] }).map((image) => image.mediaType))
      .toEqual(['image/jpeg', 'image/webp']);
  });

  it('are refused in any other shape or type', () => {
    expect(imagesOf({ image: { mediaType: 'image/svg+xml', data: png } })).toEqual([]);
    expect(imagesOf({ image: { mediaType: 'image/png', data: 'not base64!' } })).toEqual([]);
    expect(imagesOf({ image: { url: 'https://example.com/x.png' } })).toEqual([]);
    expect(imagesOf({ images: 'x' })).toEqual([]);
    expect(imagesOf(null)).toEqual([]);
  });

  it('are stripped from the metadata that is shown', () => {
    expect(withoutImages({ image: {}, images: [], width: 3 })).toEqual({ width: 3 });
    const plain = { width: 3 };
    expect(withoutImages(plain)).toBe(plain);
  });
});

describe('tool messages', () => {
  it('tell the model what happened and what to do next', () => {
    expect(failureText('tool_error', 'boom')).toBe('Error (tool_error): boom\nThe tool did not complete. Fix the arguments or try a different approach.');
    expect(failureText('not_capable', 'Requires net access')).toMatch(/^Error \(not_capable\): Requires net access\n.*another way/);
    expect(unknownToolText('nope', ['a', 'b'])).toBe('Error (unknown_tool): There is no tool named "nope" in this session. Available tools: a, b.\nCall one of those instead.');
    expect(invalidArgumentsText('t', [{ pointer: '/n', message: 'must be number' }])).toBe(
      'Error (invalid_arguments): The arguments for "t" do not match its schema:\n- /n must be number\nFix them and call again. The tool did not run.',
    );
  });
});
