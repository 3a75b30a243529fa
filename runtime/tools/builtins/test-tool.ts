import type { BuiltinTool, InvokeResult } from '../contract.ts';
import { checkExpectations, checkInWorker, needsIsolation } from './expectations.ts';
import type { CheckOutcome, Expectation } from './expectations.ts';
import { errorMessage, failure, preview, stringParam, success } from './tool-results.ts';

const OUTPUT_PREVIEW_CHARS = 2000;
const CHECK_TIMEOUT_MS = 3000;
const MAX_SCHEMA_BYTES = 64 * 1024;

/**
 * test_tool: runs a tool through the same choke point as any call (a user tool in the sandbox, with
 * the caller's grant) and checks its output. Every given expectation must hold.
 */
export const testTool: BuiltinTool = {
  name: 'test_tool',
  description:
    'Run a tool with the given params and check its output against an expectation: equals (exact text, or a JSON value compared with the output parsed as JSON), ' +
    'contains (a substring), regex (a JavaScript regular expression, `pattern` or `/pattern/flags`), jsonSchema (the output parsed as JSON must match the schema). ' +
    'Every expectation given must hold. Use it right after write_tool to check that a tool works, and after changing a tool to check it still does. ' +
    'The result says PASS or FAIL, why, and shows the actual output.',
  parameters: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, description: 'The tool to run.' },
      params: { type: 'object', description: "The tool's parameters, as its schema asks. Default: {}." },
      expect: {
        type: 'object',
        minProperties: 1,
        additionalProperties: false,
        description: 'At least one check; all given must pass.',
        properties: {
          equals: { type: ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'], description: 'A string: the whole output equals it exactly. Any other JSON value: the output parsed as JSON deep-equals it.' },
          contains: { type: 'string', description: 'The output contains this text.' },
          regex: { type: 'string', minLength: 1, description: 'The output matches this JavaScript regular expression: `\\d+ items` or `/^ok$/im`.' },
          jsonSchema: { type: 'object', description: 'The output, parsed as JSON, matches this JSON Schema (draft 2020-12).' },
        },
      },
    },
    required: ['name', 'expect'],
    additionalProperties: false,
  },
  kind: 'execute',
  mode: 'sequential',
  async execute(params, context) {
    const name = stringParam(params, 'name') ?? '';
    const input = params as { params?: Record<string, unknown>; expect: Expectation };
    const toolParams = input.params ?? {};
    const expectation = input.expect;
    const call = `${name}(${preview(JSON.stringify(toolParams), 200)})`;
    if (name === 'test_tool') return failure('test_tool cannot run itself; name the tool you want to test.');
    if (expectation.jsonSchema !== undefined && JSON.stringify(expectation.jsonSchema).length > MAX_SCHEMA_BYTES) {
      return failure(`expect.jsonSchema is over ${MAX_SCHEMA_BYTES} bytes; give a smaller schema.`);
    }

    let result: InvokeResult;
    try {
      result = await context.host.invoke(name, toolParams, context.signal);
    } catch (error) {
      // Unknown tool, params that violate its schema, an overloaded service: nothing ran.
      return failure(`test_tool could not run ${call}: ${errorMessage(error)}\nNothing ran. Check the name with list_tools and the params with tool_manual, then try again.`, { passed: false, tool: name, ran: false });
    }
    const output = result.content;
    const outputSection = [`Output (${output.length} character${output.length === 1 ? '' : 's'}, ${result.durationMs} ms):`, preview(output, OUTPUT_PREVIEW_CHARS)];
    const baseMetadata = { tool: name, callId: result.callId, durationMs: result.durationMs, output: preview(output, OUTPUT_PREVIEW_CHARS) };
    if (!result.ok) {
      const error = result.error ?? { kind: 'tool_error', message: output };
      return failure([
        `FAIL: ${call} did not complete: ${error.kind}: ${error.name === undefined || error.name === '' ? '' : `${error.name}: `}${error.message}`,
        'The expectations were not checked. Fix the tool (write_tool) or the params and test again.',
        ...(output === '' || output === error.message ? [] : ['', ...outputSection]),
      ].join('\n'), { ...baseMetadata, passed: false, error });
    }

    let checks: CheckOutcome[];
    try {
      checks = needsIsolation(expectation)
        ? await checkInWorker(output, expectation, { timeoutMs: CHECK_TIMEOUT_MS, signal: context.signal })
        : checkExpectations(output, expectation);
    } catch (error) {
      context.signal.throwIfAborted();
      return failure(`test_tool ran ${call} but could not check its output: ${errorMessage(error)}. Simplify the expectation and test again.`, { ...baseMetadata, passed: false });
    }
    const unusable = checks.filter((check) => check.status === 'invalid');
    if (unusable.length > 0) {
      return failure([
        `test_tool ran ${call}, but the expectation cannot be used:`,
        ...unusable.map((check) => `- expect.${check.check}: ${check.reason}`),
        'Fix the expectation and test again.',
      ].join('\n'), { ...baseMetadata, passed: false, checks });
    }
    const failed = checks.filter((check) => check.status === 'fail');
    const passed = failed.length === 0;
    const headline = passed
      ? `PASS: ${call} met ${checks.length === 1 ? 'the expectation' : `all ${checks.length} expectations`}.`
      : `FAIL: ${call}: ${failed.length} of ${checks.length} expectation${checks.length === 1 ? '' : 's'} failed.`;
    const lines = [headline, ...checks.map((check) => `- ${check.check} ${check.status === 'pass' ? 'passed' : 'FAILED'}: ${check.reason}`), '', ...outputSection];
    const metadata = { ...baseMetadata, passed, checks };
    return passed ? success(lines.join('\n'), metadata) : failure(lines.join('\n'), metadata);
  },
};
