import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readRestriction } from "../../src/permissions/read-restriction.js";
import type { PermissionRuleEntry } from "../../src/permissions/types.js";
import { hidingFiles } from "../../src/search/backend.js";
import type { FileQuery, SearchBackend } from "../../src/search/query.js";
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

  it("judges a search's display paths, whatever their shape, as it judges the absolute path", async () => {
    const dir = tree();
    const r = restriction(dir, ["Read(.env)", "Read(./secrets/**)", "Read(*.pem)", "Read(//etc/shadow)"])!;
    const shapes = [
      ".env",
      "a/.env",
      "a/key.pem",
      "secrets/x.txt",
      "./secrets/x.txt",
      "a/../secrets/x.txt",
      "a/./key.pem",
      "a/secrets/../.env",
      "notes.txt",
      "../etc/shadow",
      "/etc/shadow",
      join(dir, "a/.env"),
      join(dir, "notes.txt"),
    ];
    const seen = new Map<string, boolean>();
    const listing: SearchBackend = {
      name: "listing",
      newestFiles: async (query: FileQuery) => {
        for (const path of shapes) seen.set(path, query.exclude?.(path) === true);
        return { newest: [], total: 0 };
      },
      matchingFiles: async () => [],
      countMatches: async () => [],
      matchingLines: async () => ({ files: [], truncated: false }),
    } as unknown as SearchBackend;
    for (const [cwd, root] of [
      [dir, dir],
      [dir, join(dir, "a")],
      [join(dir, "a"), dir],
    ] as const) {
      const query = { cwd, root, rootIsFile: false, globs: [], respectIgnore: false } as unknown as FileQuery;
      await hidingFiles(listing, r).newestFiles({ ...query, signal: new AbortController().signal }, 10);
      for (const path of shapes) {
        expect([cwd, root, path, seen.get(path)]).toEqual([cwd, root, path, r.hides(resolve(cwd, path))]);
      }
    }
  });

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
