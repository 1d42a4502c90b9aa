import type { EvaluationInput } from "./types.js";

export function suggestRule(input: EvaluationInput): string {
  return input.toolName;
}
