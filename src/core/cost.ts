/** Token usage and cost of model calls in a session (the agent loop and sub-agents add to it). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

export class CostTracker {
  private readonly perModel = new Map<string, Required<Usage>>();

  add(model: string, usage: Usage): void {
    const total = this.perModel.get(model) ?? {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    };
    total.inputTokens += usage.inputTokens;
    total.outputTokens += usage.outputTokens;
    total.cacheReadTokens += usage.cacheReadTokens ?? 0;
    total.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
    this.perModel.set(model, total);
  }

  byModel(): ReadonlyMap<string, Required<Usage>> {
    return this.perModel;
  }

  total(): Required<Usage> {
    const sum = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    for (const u of this.perModel.values()) {
      sum.inputTokens += u.inputTokens;
      sum.outputTokens += u.outputTokens;
      sum.cacheReadTokens += u.cacheReadTokens;
      sum.cacheWriteTokens += u.cacheWriteTokens;
    }
    return sum;
  }
}
