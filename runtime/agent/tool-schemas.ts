import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { ToolDescription } from '../tools/contract.ts';

/** The tools a run offers, as chat-completions function definitions (built once when the run starts). */
export function toolSchemas(tools: readonly ToolDescription[]): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: { ...tool.parameters } },
  }));
}
