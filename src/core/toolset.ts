import type { Host, HostCapability } from "./host.js";
import type { AnyTool } from "./tool.js";

/** A tool the host cannot serve, and why, for `cc-tools list` and unknown-tool errors. */
export interface UnavailableTool {
  tool: AnyTool;
  reason: string;
}

const CAPABILITY_NEEDS: Record<HostCapability, string> = {
  permissionPrompt: "a person to answer permission questions",
  questions: "a person to answer questions",
  planApproval: "a person to approve plans",
  messages: "other conversations to message",
  prompts: "a conversation to run prompts in",
  model: "a configured model (set ANTHROPIC_API_KEY)",
};

/** Why `host` cannot serve `tool`, or undefined when it can. */
export function unavailableReason(tool: AnyTool, host: Host): string | undefined {
  const missing = tool.requires.filter((capability) => !host.supports(capability));
  if (missing.length > 0) {
    return `it needs ${missing.map((c) => CAPABILITY_NEEDS[c]).join(" and ")}, which this host (${host.name}) does not provide`;
  }
  return tool.unavailableReason();
}

/** Thrown when two tools of one set share a name or alias: one would silently hide the other. */
export class DuplicateToolError extends Error {}

/**
 * An immutable set of tools: the built-ins, an agent type's selection, the embedder's own tools added.
 * Names and aliases are unique within a set. Derived forms (provider definitions) are computed once per set.
 */
export class ToolSet implements Iterable<AnyTool> {
  private readonly byName = new Map<string, AnyTool>();
  private readonly derived = new Map<string, unknown>();

  private constructor(readonly tools: readonly AnyTool[]) {
    for (const tool of tools) {
      for (const name of [tool.name, ...tool.aliases]) {
        const other = this.byName.get(name);
        if (other && other !== tool) {
          throw new DuplicateToolError(
            `Two tools are named "${name}" (${other.name} and ${tool.name}); rename your tool, since one would hide the other.`,
          );
        }
        this.byName.set(name, tool);
      }
    }
  }

  static of(tools: readonly AnyTool[]): ToolSet {
    return new ToolSet([...new Set(tools)]);
  }

  [Symbol.iterator](): Iterator<AnyTool> {
    return this.tools[Symbol.iterator]();
  }

  get size(): number {
    return this.tools.length;
  }

  /** A tool by its exact (case-sensitive) name or one of its aliases. */
  get(name: string): AnyTool | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return this.tools.map((t) => t.name);
  }

  /** This set plus `tools`; a name already taken is an error, never a silent shadow. */
  with(tools: readonly AnyTool[]): ToolSet {
    return tools.length === 0 ? this : ToolSet.of([...this.tools, ...tools]);
  }

  filter(keep: (tool: AnyTool) => boolean): ToolSet {
    const kept = this.tools.filter(keep);
    return kept.length === this.tools.length ? this : new ToolSet(kept);
  }

  /** The tools named (by name or alias), in this set's order; unknown names are ignored. */
  only(names: readonly string[]): ToolSet {
    const wanted = new Set(names.map((n) => this.get(n)).filter((t) => t !== undefined));
    return this.filter((t) => wanted.has(t));
  }

  without(names: readonly string[]): ToolSet {
    const dropped = new Set(names.map((n) => this.get(n)).filter((t) => t !== undefined));
    return this.filter((t) => !dropped.has(t));
  }

  /** Splits the set into what `host` can serve and what it cannot, each with its reason. */
  availableFor(host: Host): { available: ToolSet; unavailable: UnavailableTool[] } {
    const unavailable: UnavailableTool[] = [];
    const available = this.filter((tool) => {
      const reason = unavailableReason(tool, host);
      if (reason) unavailable.push({ tool, reason });
      return reason === undefined;
    });
    return { available, unavailable };
  }

  /** A value derived from this set, computed on first use and kept (provider definitions). */
  memo<T>(key: string, compute: (tools: readonly AnyTool[]) => T): T {
    if (!this.derived.has(key)) this.derived.set(key, compute(this.tools));
    return this.derived.get(key) as T;
  }
}
