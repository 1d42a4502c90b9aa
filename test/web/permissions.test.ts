import { describe, expect, it } from "vitest";
import type { PermissionMode } from "../../src/core/permission-level.js";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { evaluatePermission } from "../../src/permissions/evaluate.js";
import { allowAllHandler } from "../../src/permissions/handlers.js";
import { validateRule } from "../../src/permissions/rules.js";
import { suggestRules } from "../../src/permissions/suggest.js";
import type { EvaluationInput, PermissionRuleEntry, RuleBehavior } from "../../src/permissions/types.js";
import { findTool } from "../../src/registry.js";
import { runWebFetch } from "../../src/web/run-webfetch.js";
import { fetchTarget } from "../../src/web/url.js";
import { allow, callContext, webContext } from "./helpers.js";
import { routes, serve } from "./servers.js";

function entry(text: string): PermissionRuleEntry {
  const [behavior, rule] = text.includes(":W")
    ? (text.split(/:(?=W)/) as [RuleBehavior, string])
    : ["allow", text];
  return { rule, behavior: behavior as RuleBehavior, source: { scope: "project", root: "/" } };
}

function input(url: string, mode: PermissionMode, rules: string[], toolName = "WebFetch"): EvaluationInput {
  const tool = findTool(toolName)!;
  return {
    toolName,
    level: tool.permissionLevel,
    subject: tool.permissionSubject({ url, prompt: "", query: "q" }, webContext()),
    mode,
    rules: rules.map(entry),
    workingDir: "/work",
    additionalDirectories: [],
    homeDir: "/home/u",
  };
}

const decide = (url: string, mode: PermissionMode, ...rules: string[]) =>
  evaluatePermission(input(url, mode, rules)).behavior;

describe("WebFetch permission", () => {
  it("is a matrix of mode × rule × URL", () => {
    const cases: Array<[PermissionMode, string[], string, RuleBehavior]> = [
      // The network is outside the workspace: reading it asks, except where the mode allows everything.
      ["default", [], "https://example.com/", "ask"],
      ["acceptEdits", [], "https://example.com/", "ask"],
      ["plan", [], "https://example.com/", "ask"],
      ["dontAsk", [], "https://example.com/", "deny"],
      ["bypassPermissions", [], "https://example.com/", "allow"],
      ["default", ["WebFetch(domain:example.com)"], "https://example.com/a", "allow"],
      ["plan", ["WebFetch(domain:example.com)"], "https://example.com/a", "allow"],
      ["dontAsk", ["WebFetch(domain:example.com)"], "https://example.com/a", "allow"],
      ["default", ["WebFetch(domain:example.com)"], "https://docs.example.com/a", "ask"],
      ["default", ["WebFetch(domain:*.example.com)"], "https://docs.example.com/a", "allow"],
      ["default", ["WebFetch(domain:*.example.com)"], "https://example.com/", "ask"],
      ["default", ["WebFetch(domain:*)"], "https://anything.example.org/", "allow"],
      ["default", ["WebFetch"], "https://anything.example.org/", "allow"],
      ["default", ["WebFetch(domain:*.0.0.1)"], "http://127.0.0.1/", "ask"],
      ["bypassPermissions", ["deny:WebFetch(domain:evil.example)"], "https://evil.example/", "deny"],
      ["default", ["WebFetch", "deny:WebFetch(domain:*.evil.example)"], "https://a.evil.example/", "deny"],
      ["bypassPermissions", ["ask:WebFetch(domain:example.com)"], "https://example.com/", "ask"],
      // Rules judge the URL really fetched: http becomes https, a GitHub blob comes from raw.githubusercontent.com.
      ["default", ["WebFetch(domain:example.com)"], "http://example.com/", "allow"],
      ["default", ["WebFetch(domain:github.com)"], "https://github.com/o/r/blob/main/README.md", "ask"],
      [
        "default",
        ["WebFetch(domain:raw.githubusercontent.com)"],
        "https://github.com/o/r/blob/main/README.md",
        "allow",
      ],
    ];
    for (const [mode, rules, url, expected] of cases) {
      expect(decide(url, mode, ...rules), `${mode} ${rules.join(",")} ${url}`).toBe(expected);
    }
  });

  it("says why it asks and suggests the narrowest rule", () => {
    const asked = evaluatePermission(input("https://docs.example.com/page", "default", []));
    expect(asked.reason).toBe(
      "WebFetch of https://docs.example.com/page reaches the network, and no allow rule covers that host",
    );
    expect(suggestRules(input("https://docs.example.com/page", "default", []))).toEqual([
      "WebFetch(domain:docs.example.com)",
    ]);
  });

  it("accepts domain rules for a host, its subdomains or every host, and rejects other specifiers", () => {
    for (const ok of ["WebFetch(domain:example.com)", "WebFetch(domain:*.example.com)", "WebFetch(domain:*)"])
      expect(validateRule(ok), ok).toBeUndefined();
    expect(validateRule("WebFetch(https://example.com)")).toMatch(/WebFetch rules name a host/);
    expect(validateRule("WebFetch(domain:exa mple.com)")).toMatch(/is not a host name/);
  });

  it("rewrites what it fetches: https upgrade except loopback, GitHub blobs as raw, no credentials", () => {
    expect(fetchTarget("http://example.com/a#frag").href).toBe("https://example.com/a");
    expect(fetchTarget("http://localhost:3000/x").href).toBe("http://localhost:3000/x");
    expect(fetchTarget("http://127.0.0.1:8080/").href).toBe("http://127.0.0.1:8080/");
    expect(fetchTarget("http://[::1]:8080/").href).toBe("http://[::1]:8080/");
    expect(fetchTarget("https://github.com/nodejs/node/blob/main/doc/api/fs.md").href).toBe(
      "https://raw.githubusercontent.com/nodejs/node/main/doc/api/fs.md",
    );
    expect(fetchTarget("https://github.com/nodejs/node/tree/main/doc").href).toBe(
      "https://github.com/nodejs/node/tree/main/doc",
    );
    expect(() => fetchTarget("file:///etc/passwd")).toThrow(/fetches http and https URLs/);
    expect(() => fetchTarget("https://user:pw@example.com/")).toThrow(/does not send credentials/);
  });

  it("is refused, with the rule that would allow it, when nobody can be asked", async () => {
    const site = await serve(routes({ "/": { body: "<p>page</p>" } }));
    const result = await runTool(
      "WebFetch",
      { url: `${site.origin}/`, prompt: "" },
      webContext({ permissionMode: "default" }),
    );
    expect(result.isError).toBe(true);
    expect(ToolResult.text(result)).toContain("WebFetch(domain:127.0.0.1)");
    expect(site.hits).toEqual([]);
  });

  it("reaches a private host once when the user allows that very fetch, and only that once", async () => {
    const site = await serve(routes({ "/": { body: "<p>intranet page</p>" } }));
    const asked: string[] = [];
    const once = (behavior: "allow" | "deny") =>
      webContext({
        permissionMode: "default",
        permissionHandler: {
          name: "person",
          interactive: true,
          ask: async (request) => {
            asked.push(String((request.input as { url: string }).url));
            return behavior === "allow"
              ? { behavior: "allow", scope: "once" }
              : { behavior: "deny", message: "no" };
          },
        },
      });
    const allowed = await runTool("WebFetch", { url: `${site.origin}/`, prompt: "" }, once("allow"));
    expect(ToolResult.text(allowed)).toContain("intranet page");
    expect(asked).toEqual([`${site.origin}/`]);
    const declined = await runTool("WebFetch", { url: `${site.origin}/x`, prompt: "" }, once("deny"));
    expect(declined.isError).toBe(true);
    // A standing rule for the public web is no approval of this host: the address check still holds.
    const ruled = await runTool(
      "WebFetch",
      { url: `${site.origin}/y`, prompt: "" },
      webContext({ permissionMode: "default", rules: allow("WebFetch") }),
    );
    // A policy that allows everything is nobody's approval: the address check holds.
    const policyAllowed = await runTool(
      "WebFetch",
      { url: `${site.origin}/z`, prompt: "" },
      webContext({ permissionMode: "default", permissionHandler: allowAllHandler }),
    );
    expect(ToolResult.text(policyAllowed)).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(ToolResult.text(ruled)).toMatch(
      /127\.0\.0\.1 is a loopback address.*WebFetch\(domain:127\.0\.0\.1\)/s,
    );
    expect(site.hits).toEqual(["/"]);
  });

  it("does not let one approval reach a private address behind a name, nor cache what it reached", async () => {
    const site = await serve(routes({ "/": { body: "<p>metadata</p>" } }));
    const person = {
      name: "person",
      interactive: true,
      ask: async () => ({ behavior: "allow" as const, scope: "once" as const }),
    };
    // The person saw docs.example.test, not that it resolves to a loopback address.
    await expect(
      runWebFetch(
        { url: `http://docs.example.test:${site.port}/`, prompt: "" },
        Object.assign(callContext(webContext({ permissionMode: "default" })), { approvedByUser: true }),
        { resolve: async () => [{ address: "127.0.0.1", family: 4 }] },
      ),
    ).rejects.toThrow(/docs\.example\.test resolves to 127\.0\.0\.1, a loopback address/);
    const ctx = webContext({ permissionMode: "default", permissionHandler: person });
    const first = await runTool("WebFetch", { url: `${site.origin}/`, prompt: "" }, ctx);
    expect(ToolResult.text(first)).toContain("metadata");
    // The same URL again, now allowed by a public-web rule and not asked: fetched (and refused), not served from a cache.
    const again = await runTool(
      "WebFetch",
      { url: `${site.origin}/`, prompt: "" },
      webContext({ permissionMode: "default", rules: allow("WebFetch"), session: ctx.session }),
    );
    expect(ToolResult.text(again)).toMatch(/127\.0\.0\.1 is a loopback address/);
  });
});
