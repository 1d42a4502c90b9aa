import type { PermissionMode } from "../../core/permission-level.js";
import type { SessionSlot } from "../../core/session.js";

/** The mode in force before EnterPlanMode, restored when the plan is approved. */
export interface PlanState {
  previousMode: PermissionMode | undefined;
}

export const planStateSlot: SessionSlot<PlanState> = {
  key: "plan",
  create: () => ({ previousMode: undefined }),
  save: (state) => state,
  load: (data) => ({ previousMode: (data as Partial<PlanState> | null)?.previousMode }),
};
