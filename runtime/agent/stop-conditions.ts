/** The loop's stop rules: pure, named predicates over the steps so far. */

export interface StepResult {
  readonly toolCalls: readonly { readonly id: string }[];
  readonly toolResults: readonly { readonly terminate: boolean }[];
}

export type StopCondition = (state: { readonly steps: readonly StepResult[] }) => boolean;

export const isStepLimit = (limit: number): StopCondition => ({ steps }) => steps.length >= limit;

export const hasNoToolCalls: StopCondition = ({ steps }) => (steps.at(-1)?.toolCalls.length ?? 0) === 0;

/** Every result of the last batch asked to terminate (an empty batch never does). */
export const allResultsTerminate: StopCondition = ({ steps }) => {
  const results = steps.at(-1)?.toolResults ?? [];
  return results.length > 0 && results.every((result) => result.terminate);
};
