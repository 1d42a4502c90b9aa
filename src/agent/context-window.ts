/**
 * The context window a model has when nobody says otherwise (Claude's standard window). Local models often
 * have less: `cc-tools agent --context-window` sets it, and compaction aims below it. A module of its own,
 * so the command line can name it without loading the loop.
 */
export const DEFAULT_CONTEXT_WINDOW = 200_000;
