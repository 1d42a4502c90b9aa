import { describe, expect, it } from "vitest";
import { promptLine } from "../../src/process/prompt.js";

describe("promptLine", () => {
  it.each([
    "Continue? [y/N] ",
    "Overwrite file.txt (yes/no)? ",
    "[sudo] password for dev: ",
    "Enter passphrase for key '/home/dev/.ssh/id_ed25519': ",
    "Press any key to continue",
    "downloading...\nProceed?",
    "package name: ",
  ])("recognises %j", (tail) => {
    expect(promptLine(tail)).toBeDefined();
  });

  it.each(["", "Compiling 12 files\n", "done.\n", "What is this?\n", "Building... 45%"])(
    "does not flag %j",
    (tail) => {
      expect(promptLine(tail)).toBeUndefined();
    },
  );
});
