import type { PermissionHandler } from "./types.js";

/** For non-interactive use: nobody can be asked, so an ask becomes a denial that says how to allow it. */
export const autoHandler: PermissionHandler = {
  name: "auto",
  async ask(request) {
    return {
      behavior: "deny",
      message: `${request.reason}. Nobody can be asked here; to allow it, add the rule ${request.suggestedRule} (for example --allow '${request.suggestedRule}') or choose another permission mode.`,
    };
  },
};
