/**
 * Writes sandbox/guest/single-byte-encodings.ts: the labels of every encoding of the WHATWG
 * Encoding Standard, and what bytes 0x80..0xFF decode to in each single-byte encoding, read from
 * Node's own full-ICU TextDecoder (the guest runtime cannot reach ICU, so it carries the tables).
 *
 *   node scripts/generate-single-byte-encodings.ts
 *
 * It checks Node agrees with the standard before writing: every label resolves to its encoding,
 * the replacement labels are refused, each table has one UTF-16 code unit per byte, and the two
 * encodings the guest computes or shares (x-user-defined, iso-8859-8-i) match.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const OUTPUT = fileURLToPath(new URL('../sandbox/guest/single-byte-encodings.ts', import.meta.url));

/** https://encoding.spec.whatwg.org/#names-and-labels, in the standard's order; the name is what `TextDecoder#encoding` returns. */
const LABELS: readonly (readonly [name: string, labels: readonly string[]])[] = [
  ['utf-8', ['unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'utf-8', 'utf8', 'x-unicode20utf8']],
  ['ibm866', ['866', 'cp866', 'csibm866', 'ibm866']],
  ['iso-8859-2', ['csisolatin2', 'iso-8859-2', 'iso-ir-101', 'iso8859-2', 'iso88592', 'iso_8859-2', 'iso_8859-2:1987', 'l2', 'latin2']],
  ['iso-8859-3', ['csisolatin3', 'iso-8859-3', 'iso-ir-109', 'iso8859-3', 'iso88593', 'iso_8859-3', 'iso_8859-3:1988', 'l3', 'latin3']],
  ['iso-8859-4', ['csisolatin4', 'iso-8859-4', 'iso-ir-110', 'iso8859-4', 'iso88594', 'iso_8859-4', 'iso_8859-4:1988', 'l4', 'latin4']],
  ['iso-8859-5', ['csisolatincyrillic', 'cyrillic', 'iso-8859-5', 'iso-ir-144', 'iso8859-5', 'iso88595', 'iso_8859-5', 'iso_8859-5:1988']],
  ['iso-8859-6', [
    'arabic', 'asmo-708', 'csiso88596e', 'csiso88596i', 'csisolatinarabic', 'ecma-114', 'iso-8859-6', 'iso-8859-6-e', 'iso-8859-6-i',
    'iso-ir-127', 'iso8859-6', 'iso88596', 'iso_8859-6', 'iso_8859-6:1987',
  ]],
  ['iso-8859-7', [
    'csisolatingreek', 'ecma-118', 'elot_928', 'greek', 'greek8', 'iso-8859-7', 'iso-ir-126', 'iso8859-7', 'iso88597', 'iso_8859-7',
    'iso_8859-7:1987', 'sun_eu_greek',
  ]],
  ['iso-8859-8', [
    'csiso88598e', 'csisolatinhebrew', 'hebrew', 'iso-8859-8', 'iso-8859-8-e', 'iso-ir-138', 'iso8859-8', 'iso88598', 'iso_8859-8',
    'iso_8859-8:1988', 'visual',
  ]],
  ['iso-8859-8-i', ['csiso88598i', 'iso-8859-8-i', 'logical']],
  ['iso-8859-10', ['csisolatin6', 'iso-8859-10', 'iso-ir-157', 'iso8859-10', 'iso885910', 'l6', 'latin6']],
  ['iso-8859-13', ['iso-8859-13', 'iso8859-13', 'iso885913']],
  ['iso-8859-14', ['iso-8859-14', 'iso8859-14', 'iso885914']],
  ['iso-8859-15', ['csisolatin9', 'iso-8859-15', 'iso8859-15', 'iso885915', 'iso_8859-15', 'l9']],
  ['iso-8859-16', ['iso-8859-16']],
  ['koi8-r', ['cskoi8r', 'koi', 'koi8', 'koi8-r', 'koi8_r']],
  ['koi8-u', ['koi8-ru', 'koi8-u']],
  ['macintosh', ['csmacintosh', 'mac', 'macintosh', 'x-mac-roman']],
  ['windows-874', ['dos-874', 'iso-8859-11', 'iso8859-11', 'iso885911', 'tis-620', 'windows-874']],
  ['windows-1250', ['cp1250', 'windows-1250', 'x-cp1250']],
  ['windows-1251', ['cp1251', 'windows-1251', 'x-cp1251']],
  ['windows-1252', [
    'ansi_x3.4-1968', 'ascii', 'cp1252', 'cp819', 'csisolatin1', 'ibm819', 'iso-8859-1', 'iso-ir-100', 'iso8859-1', 'iso88591',
    'iso_8859-1', 'iso_8859-1:1987', 'l1', 'latin1', 'us-ascii', 'windows-1252', 'x-cp1252',
  ]],
  ['windows-1253', ['cp1253', 'windows-1253', 'x-cp1253']],
  ['windows-1254', [
    'cp1254', 'csisolatin5', 'iso-8859-9', 'iso-ir-148', 'iso8859-9', 'iso88599', 'iso_8859-9', 'iso_8859-9:1989', 'l5', 'latin5',
    'windows-1254', 'x-cp1254',
  ]],
  ['windows-1255', ['cp1255', 'windows-1255', 'x-cp1255']],
  ['windows-1256', ['cp1256', 'windows-1256', 'x-cp1256']],
  ['windows-1257', ['cp1257', 'windows-1257', 'x-cp1257']],
  ['windows-1258', ['cp1258', 'windows-1258', 'x-cp1258']],
  ['x-mac-cyrillic', ['x-mac-cyrillic', 'x-mac-ukrainian']],
  ['gbk', ['chinese', 'csgb2312', 'csiso58gb231280', 'gb2312', 'gb_2312', 'gb_2312-80', 'gbk', 'iso-ir-58', 'x-gbk']],
  ['gb18030', ['gb18030']],
  ['big5', ['big5', 'big5-hkscs', 'cn-big5', 'csbig5', 'x-x-big5']],
  ['euc-jp', ['cseucpkdfmtjapanese', 'euc-jp', 'x-euc-jp']],
  ['iso-2022-jp', ['csiso2022jp', 'iso-2022-jp']],
  ['shift_jis', ['csshiftjis', 'ms932', 'ms_kanji', 'shift-jis', 'shift_jis', 'sjis', 'windows-31j', 'x-sjis']],
  ['euc-kr', [
    'cseuckr', 'csksc56011987', 'euc-kr', 'iso-ir-149', 'korean', 'ks_c_5601-1987', 'ks_c_5601-1989', 'ksc5601', 'ksc_5601', 'windows-949',
  ]],
  ['utf-16be', ['unicodefffe', 'utf-16be']],
  ['utf-16le', ['csunicode', 'iso-10646-ucs-2', 'ucs-2', 'unicode', 'unicodefeff', 'utf-16', 'utf-16le']],
  ['x-user-defined', ['x-user-defined']],
];

/** The replacement encoding's labels: TextDecoder refuses them (the constructor throws as for an unknown label). */
const REPLACEMENT_LABELS = ['csiso2022kr', 'hz-gb-2312', 'iso-2022-cn', 'iso-2022-cn-ext', 'iso-2022-kr', 'replacement'];

/** The encodings the guest decodes with a table: the standard's single-byte encodings but x-user-defined (a formula) and iso-8859-8-i (iso-8859-8's table). */
const SINGLE_BYTE = [
  'ibm866', 'iso-8859-2', 'iso-8859-3', 'iso-8859-4', 'iso-8859-5', 'iso-8859-6', 'iso-8859-7', 'iso-8859-8', 'iso-8859-10',
  'iso-8859-13', 'iso-8859-14', 'iso-8859-15', 'iso-8859-16', 'koi8-r', 'koi8-u', 'macintosh', 'windows-874', 'windows-1250',
  'windows-1251', 'windows-1252', 'windows-1253', 'windows-1254', 'windows-1255', 'windows-1256', 'windows-1257', 'windows-1258',
  'x-mac-cyrillic',
];

const HIGH_BYTES = Uint8Array.from({ length: 128 }, (_, i) => 0x80 + i);

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`generate-single-byte-encodings: ${message}`);
}

function decodeHighBytes(encoding: string): string {
  const decoded = new TextDecoder(encoding).decode(HIGH_BYTES);
  check(decoded.length === 128, `${encoding} decodes 0x80..0xFF to ${decoded.length} code units, not 128 (is Node built with full ICU?)`);
  return decoded;
}

/**
 * A table as the guest reads it: 128 characters, each the code unit escaped (so the file stays
 * ASCII: no invisible controls or bidi marks), or "+" for "the code unit after the previous one"
 * (before byte 0x80 comes 0x7F). The bundler prints each escape as six characters and most
 * entries continue a run, so "+" more than halves the tables in the runtime script.
 */
function encodeTable(text: string): string {
  let out = '';
  let previous = 0x7f;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    check(code >= 0x80, `a table maps a byte to the ASCII code unit ${code}`);
    out += code === previous + 1 ? '+' : `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
    previous = code;
  }
  return out;
}

function quotedKey(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `'${name}'`;
}

for (const [name, labels] of LABELS) {
  for (const label of labels) check(new TextDecoder(label).encoding === name, `Node resolves "${label}" to ${new TextDecoder(label).encoding}, the standard to ${name}`);
}
for (const label of REPLACEMENT_LABELS) {
  let refused = false;
  try {
    new TextDecoder(label);
  } catch {
    refused = true;
  }
  check(refused, `Node accepts the replacement label "${label}"`);
}
check(decodeHighBytes('iso-8859-8-i') === decodeHighBytes('iso-8859-8'), 'iso-8859-8-i and iso-8859-8 differ');
check(decodeHighBytes('x-user-defined') === String.fromCharCode(...Array.from(HIGH_BYTES, (byte) => 0xf700 + byte)), 'x-user-defined is not U+F780..U+F7FF');

const labelLines = LABELS.map(([name, labels]) => `  ${quotedKey(name)}: '${labels.join(' ')}',`);
const tableLines = SINGLE_BYTE.map((name) => `  ${quotedKey(name)}: '${encodeTable(decodeHighBytes(name))}',`);

const source = `/**
 * Generated by scripts/generate-single-byte-encodings.ts from Node ${process.version}'s full-ICU TextDecoder: do not
 * edit; run \`node scripts/generate-single-byte-encodings.ts\` instead.
 *
 * The WHATWG Encoding Standard's encodings (https://encoding.spec.whatwg.org/#names-and-labels) and,
 * for each single-byte one, what bytes 0x80..0xFF decode to: one UTF-16 code unit per byte, U+FFFD
 * where the standard maps the byte to nothing. Bytes 0x00..0x7F are ASCII in all of them.
 * x-user-defined is computed (byte + 0xF700) and iso-8859-8-i shares iso-8859-8's table.
 */

/** Each encoding's name (what \`TextDecoder#encoding\` returns) and its labels, space-separated. */
export const ENCODING_LABELS: Readonly<Record<string, string>> = {
${labelLines.join('\n')}
};

/** Bytes 0x80..0xFF of each single-byte encoding: 128 characters, each a UTF-16 code unit or "+" for the unit after the previous one (0x7F before the first). */
export const SINGLE_BYTE_TABLES: Readonly<Record<string, string>> = {
${tableLines.join('\n')}
};
`;

writeFileSync(OUTPUT, source);
console.log(`wrote ${OUTPUT} (${LABELS.length} encodings, ${SINGLE_BYTE.length} tables)`);
