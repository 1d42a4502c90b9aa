import { readFileSync } from "node:fs";

let version: string | undefined;

/** cc-tools' version, from package.json (two levels up from src/core, dist/core and the dist/bin bundle alike). */
export function packageVersion(): string {
  version ??= (
    JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
  ).version;
  return version;
}
