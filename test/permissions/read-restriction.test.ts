import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readRestriction } from "../../src/permissions/read-restriction.js";
import type { PermissionRuleEntry } from "../../src/permissions/types.js";
import { findRipgrep } from "../../src/search/ripgrep.js";
import { tempDir } from "../helpers/context.js";

const FILES = [
  ".env",
  "a/.env",
  "a/b/.env.local",
  "a/key.pem",
  "secrets/x.txt",
  "a/secrets/y.txt",
  "docs/{odd}.md",
  "docs/plain.md",
  "deep/one/two.ts",
  "deep/one/three.js",
  "notes.txt",
];

function tree() {
  const dir = tempDir();
  for (const file of FILES) {
    mkdirSync(join(dir, file, ".."), { recursive: true });
    writeFileSync(join(dir, file), "x\n");
  }
  return dir;
}

function restriction(dir: string, rules: string[]) {
  const entries: PermissionRuleEntry[] = rules.map((rule) => ({
    rule,
    behavior: "deny",
    source: { scope: "project", root: dir },
  }));
  return readRestriction({
    toolName: "Grep",
    rules: entries,
    workingDir: dir,
    additionalDirectories: [],
    homeDir: dir,
  })!;
}

describe("the search restriction's exclude globs", () => {
  const rules = [
    "Read(.env)",
    "Read(.env.*)",
    "Read(*.pem)",
    "Read(**/secrets/**)",
    "Read(./docs/{odd}.md)",
    "Read(./deep/**/*.ts)",
  ];

  it.each(["", "a", "deep", "docs"])(
    "keep from ripgrep exactly what hides() covers (searching %j)",
    async (sub) => {
      const rg = await findRipgrep();
      if (!rg) return;
      const dir = tree();
      const r = restriction(dir, rules);
      const root = join(dir, sub);
      const listed = (globs: string[]) =>
        spawnSync(rg, ["--files", "--hidden", "--no-ignore", ...globs.flatMap((g) => ["--glob", g])], {
          cwd: root,
        })
          .stdout.toString()
          .trim()
          .split("\n")
          .filter(Boolean)
          .sort();
      const all = listed([]);
      expect(all.length).toBeGreaterThan(1);
      const kept = listed(r.excludeGlobs(root));
      expect(kept).toEqual(all.filter((rel) => !r.hides(join(root, rel))));
    },
  );

  it("judges a file reached through a symlinked directory by where it leads", () => {
    const dir = tree();
    symlinkSync(join(dir, "secrets"), join(dir, "alias"));
    const r = restriction(dir, ["Read(./secrets/**)"]);
    expect(r.hides(join(dir, "alias", "x.txt"))).toBe(true);
    expect(r.hides(join(dir, "notes.txt"))).toBe(false);
    // A search rooted at the link: its listed files are judged where they really are.
    const below = r.below(join(dir, "alias"));
    expect(below(join(dir, "alias", "x.txt"))).toBe(true);
    expect(r.below(dir)(join(dir, "notes.txt"))).toBe(false);
    expect(r.below(join(dir, "alias", "x.txt"))(join(dir, "alias", "x.txt"))).toBe(true);
  });
});
