/**
 * Pins: a JSON syntax error is described by its position (line and column) and never by a quote of
 * the input. Where V8 names a position, the scanner finds the same one, so the rebuilt messages for
 * V8's position-less "Unexpected token" errors point where V8 would have.
 */
import { describe, expect, it } from 'vitest';
import { describeJsonSyntaxError, jsonSyntaxErrorOffset } from '../../runtime/json-syntax-error.ts';

function v8Error(text: string): Error {
  try {
    JSON.parse(text);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`valid JSON: ${text}`);
}

const describeText = (text: string): string => describeJsonSyntaxError(text, v8Error(text));

describe('jsonSyntaxErrorOffset', () => {
  it.each([
    '{"a": "x', '"\\x"', '"a\u0001"', '01', '-', '1.', '1e', '1.5e+', '{,}', '{"a":1,,}', 'truex', '{"a"}',
    '{"a":[1,2}', '"\\u12G4"', '{"a":1}}', '[1 2]', "{'a':1}", '{"a": -x}', '{\n  "port": 8080,\n}',
  ])('finds the position V8 names for %j', (text) => {
    const position = / at position (\d+)/.exec(v8Error(text).message)?.[1];
    expect(position).toBeDefined();
    expect(jsonSyntaxErrorOffset(text)).toBe(Number(position));
  });

  it.each(['{}', '[]', ' {"a": [1, -2.5e+3, true, false, null, "\\u00e9\\n"]} ', '0', '"x"'])('accepts valid JSON %j', (text) => {
    expect(jsonSyntaxErrorOffset(text)).toBe(-1);
  });

  it('scans deep nesting without overflowing the stack', () => {
    expect(jsonSyntaxErrorOffset(`${'['.repeat(200_000)}x`)).toBe(200_000);
  });
});

describe('describeJsonSyntaxError', () => {
  it.each([
    ['{"a": nope}', "Unexpected token 'o' in JSON at position 7 (line 1 column 8)"],
    ['[1,]', "Unexpected token ']' in JSON at position 3 (line 1 column 4)"],
    ['{"token":\n  secret-value}', "Unexpected token 's' in JSON at position 12 (line 2 column 3)"],
    ['NaN', "Unexpected token 'N' in JSON at position 0 (line 1 column 1)"],
    ['[nul', 'Unexpected end of JSON input at position 4 (line 1 column 5)'],
    ['', 'Unexpected end of JSON input at position 0 (line 1 column 1)'],
    ['[1,2', "Expected ',' or ']' after array element in JSON at position 4 (line 1 column 5)"],
    ['\u00a0{}', 'Unexpected token U+00A0 in JSON at position 0 (line 1 column 1)'],
  ])('describes %j by position only', (text, message) => {
    expect(describeText(text)).toBe(message);
  });
});
