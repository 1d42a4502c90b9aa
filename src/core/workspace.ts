import type { SessionSlot } from "./session.js";

/**
 * Where a session works, when it moved from where it started (EnterWorktree): the working directory and
 * the permission workspace follow it, and `--session` keeps it between runs.
 */
export interface WorkspaceState {
  /** The directory the session works in now; undefined while it is where its context was created. */
  workingDir: string | undefined;
}

export const workspaceSlot: SessionSlot<WorkspaceState> = {
  key: "workspace",
  create: () => ({ workingDir: undefined }),
  save: (state) => state,
  load: (data) => {
    const dir = (data as Partial<WorkspaceState> | null)?.workingDir;
    return { workingDir: typeof dir === "string" ? dir : undefined };
  },
};
