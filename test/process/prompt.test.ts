import { describe, expect, it } from "vitest";
import { leftInFullScreen, promptLine } from "../../src/process/prompt.js";

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

describe("leftInFullScreen", () => {
  const enter = "\u001b[?1049h";
  const leave = "\u001b[?1049l";
  it("is true after a switch to the alternate screen with no switch back", () => {
    expect(leftInFullScreen(`Vim: Warning: Output is not to a terminal\n${enter}\u001b[H~`)).toBe(true);
    expect(leftInFullScreen(`${enter}${leave}later${"\u001b[?47h"}`)).toBe(true);
  });
  it("is false for plain output and for a program that already left the full screen", () => {
    expect(leftInFullScreen("Compiling 12 files\n")).toBe(false);
    expect(leftInFullScreen(`${enter}page${leave}\nexit`)).toBe(false);
  });
});
