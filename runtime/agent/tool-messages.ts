/**
 * Every text the model reads about a tool call: results, failures (each with a next step), and the
 * refusals of the loop itself. Errors are translated into words here and nowhere else.
 */
import type { ParamViolation } from '../coordinator/coordinator.ts';

const RETRY_HINT = 'The tool did not complete. Fix the arguments or try a different approach.';

export function failureText(kind: string, message: string): string {
  switch (kind) {
    case 'aborted':
      return `Error (aborted): ${message}\nThe run was cancelled before this call finished.`;
    case 'not_capable':
      return `Error (not_capable): ${message}\nThis session's grant does not allow that. Do not retry the same operation; find another way or report the limitation.`;
    case 'timeout':
    case 'memory_limit':
    case 'output_limit':
      return `Error (${kind}): ${message}\nThe call hit a limit. Ask for less (smaller input, fewer results) or split the work.`;
    default:
      return `Error (${kind}): ${message}\n${RETRY_HINT}`;
  }
}

export function unknownToolText(name: string, available: readonly string[]): string {
  return `Error (unknown_tool): There is no tool named "${name}" in this session. Available tools: ${available.join(', ') || '(none)'}.\nCall one of those instead.`;
}

export function malformedArgumentsText(tool: string, detail: string): string {
  return `Error (invalid_arguments): The arguments for "${tool}" are not a JSON object: ${detail}.\nSend the arguments again as one valid JSON object matching the tool's schema. The tool did not run.`;
}

export function invalidArgumentsText(tool: string, violations: readonly ParamViolation[]): string {
  const lines = violations.map((violation) => `- ${violation.pointer || '/'} ${violation.message}`);
  return `Error (invalid_arguments): The arguments for "${tool}" do not match its schema:\n${lines.join('\n')}\nFix them and call again. The tool did not run.`;
}

export function overloadedText(message: string): string {
  return `Error (overloaded): ${message}\nThe tool did not run. Try again in a moment or continue without it.`;
}

export function imageNoticeText(tool: string, callId: string, count: number): string {
  return `The ${count === 1 ? 'image' : `${count} images`} returned by ${tool} (call ${callId}):`;
}

export function reflectionPrompt(focus: string | undefined): string {
  return [
    'You are reviewing the work of an AI agent. Below is its session so far.',
    'Write a short, candid critique (at most 8 bullet points): mistakes, unverified assumptions, wasted steps, what is missing, and the best next step.',
    focus === undefined ? '' : `Focus on: ${focus}`,
  ].filter((line) => line !== '').join('\n');
}
