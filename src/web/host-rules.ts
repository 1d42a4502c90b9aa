import { hostMatches, parseRule } from "../permissions/rules.js";
import type { PermissionRuleEntry } from "../permissions/types.js";

/**
 * Whether an allow rule names this host for `tool`: `WebFetch(domain:intranet.example)` or
 * `WebFetch(domain:*.example)`. Only such a rule lets a fetch reach a private, link-local or loopback
 * address; `WebFetch` or `WebFetch(domain:*)` allow the public web, not the machines behind it.
 */
export function allowRuleNamesHost(
  rules: readonly PermissionRuleEntry[],
  hostname: string,
  tool = "WebFetch",
): boolean {
  const host = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
  return rules.some((entry) => {
    if (entry.behavior !== "allow") return false;
    const parsed = parseRule(entry.rule);
    return (
      parsed.ok &&
      parsed.rule.kind === "domain" &&
      parsed.rule.tool === tool &&
      parsed.rule.host !== "*" &&
      hostMatches(parsed.rule.host, host)
    );
  });
}
