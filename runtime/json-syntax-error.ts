/**
 * Says where JSON.parse gave up on `text`, and never quotes the text. V8's "Unexpected token"
 * messages quote the input and carry no position: in a config file that quote can be a secret
 * (`"apiKey": sk-...` without its quotes), and a client's body has no place in a response. Those
 * messages are rebuilt from a scan for the first bad character; V8's other messages already name
 * the position and quote nothing, so they are kept as they are.
 */
export function describeJsonSyntaxError(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (/ in JSON at position \d+( \(line \d+ column \d+\))?$/.test(message)) return message;
  const offset = jsonSyntaxErrorOffset(text);
  if (offset === -1) return 'Not valid JSON';
  const what = offset === text.length ? 'Unexpected end of JSON input' : `Unexpected token ${describeCharacter(text.charAt(offset))} in JSON`;
  return `${what} at position ${offset} ${lineAndColumn(text, offset)}`;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const LITERALS: ReadonlyMap<string, string> = new Map([['t', 'true'], ['f', 'false'], ['n', 'null']]);
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);
const isDigit = (character: string): boolean => character >= '0' && character <= '9';
const isHex = (character: string): boolean => /^[0-9a-fA-F]$/.test(character);

type Expected = 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'comma-or-close';

/**
 * The offset of the first character at which `text` stops being JSON (where V8 reports it),
 * `text.length` when it ends too early, or -1 when it is valid. Iterative, so deep nesting cannot
 * overflow the stack. Scanners below return the end of what they read, or `~offset` of the fault.
 */
export function jsonSyntaxErrorOffset(text: string): number {
  const owed: string[] = []; // closing brackets still owed, innermost last
  let expected: Expected = 'value';
  let i = 0;
  const skipWhitespace = (): void => {
    while (i < text.length && WHITESPACE.has(text.charAt(i))) i++;
  };
  for (;;) {
    skipWhitespace();
    if (i === text.length) return expected === 'comma-or-close' && owed.length === 0 ? -1 : i;
    const character = text.charAt(i);
    if (expected === 'comma-or-close') {
      if (owed.length === 0) return i; // something after the document
      if (character === owed.at(-1)) {
        owed.pop();
        i++;
      } else if (character === ',') {
        i++;
        expected = owed.at(-1) === '}' ? 'key' : 'value';
      } else {
        return i;
      }
      continue;
    }
    if ((expected === 'value-or-close' && character === ']') || (expected === 'key-or-close' && character === '}')) {
      owed.pop();
      i++;
      expected = 'comma-or-close';
      continue;
    }
    if (expected === 'key' || expected === 'key-or-close') {
      if (character !== '"') return i;
      const end = scanString(text, i);
      if (end < 0) return ~end;
      i = end;
      skipWhitespace();
      if (i === text.length || text.charAt(i) !== ':') return i;
      i++;
      expected = 'value';
      continue;
    }
    // A value is expected.
    if (character === '{' || character === '[') {
      owed.push(character === '{' ? '}' : ']');
      i++;
      expected = character === '{' ? 'key-or-close' : 'value-or-close';
      continue;
    }
    const literal = LITERALS.get(character);
    let end: number;
    if (literal !== undefined) end = scanLiteral(text, i, literal);
    else if (character === '"') end = scanString(text, i);
    else if (character === '-' || isDigit(character)) end = scanNumber(text, i);
    else return i;
    if (end < 0) return ~end;
    i = end;
    expected = 'comma-or-close';
  }
}

function scanLiteral(text: string, start: number, literal: string): number {
  for (let k = 0; k < literal.length; k++) {
    if (text.charAt(start + k) !== literal.charAt(k)) return ~Math.min(start + k, text.length);
  }
  return start + literal.length;
}

function scanString(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    if (i >= text.length) return ~text.length;
    const character = text.charAt(i);
    if (character === '"') return i + 1;
    if (character < ' ') return ~i;
    if (character !== '\\') {
      i++;
      continue;
    }
    const escape = text.charAt(i + 1);
    if (escape === 'u') {
      for (let k = 2; k < 6; k++) if (!isHex(text.charAt(i + k))) return ~Math.min(i + k, text.length);
      i += 6;
    } else if (ESCAPES.has(escape)) {
      i += 2;
    } else {
      return ~Math.min(i + 1, text.length);
    }
  }
}

function scanNumber(text: string, start: number): number {
  let i = start;
  const digits = (): boolean => {
    const first = i;
    while (isDigit(text.charAt(i))) i++;
    return i > first;
  };
  if (text.charAt(i) === '-') i++;
  if (text.charAt(i) === '0') {
    i++;
    if (isDigit(text.charAt(i))) return ~i;
  } else if (!digits()) {
    return ~i;
  }
  if (text.charAt(i) === '.') {
    i++;
    if (!digits()) return ~i;
  }
  if (text.charAt(i) === 'e' || text.charAt(i) === 'E') {
    i++;
    if (text.charAt(i) === '+' || text.charAt(i) === '-') i++;
    if (!digits()) return ~i;
  }
  return i;
}

/** One character, shown the way V8 shows it; anything unprintable by its code point. */
function describeCharacter(character: string): string {
  return /^[\x21-\x7e]$/.test(character) ? `'${character}'` : `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `(line ${line} column ${offset - before.lastIndexOf('\n')})`;
}
