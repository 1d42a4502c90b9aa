import type { SandboxPolicy } from "./policy.js";

/** A string literal in the sandbox profile language (SBPL, a Scheme): quotes and backslashes escaped. */
export function sbplString(text: string): string {
  if (text.includes("\0"))
    throw new Error(`a sandbox profile cannot name a path with a NUL byte: ${JSON.stringify(text)}`);
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

const subpath = (p: string) => `(subpath ${sbplString(p)})`;
const literal = (p: string) => `(literal ${sbplString(p)})`;

/**
 * macOS `sandbox-exec` profile carrying the same policy as the bubblewrap mounts. In SBPL the last rule
 * that matches an operation decides, so the order is: allow everything, deny writes, allow the writable
 * places, deny the control files and the directories that hold them (a rename needs write access to the
 * directory entry itself), deny reads of masked paths, and deny the network except the filtering proxy.
 * Not run in CI (no macOS there); docs/SANDBOX.md says so.
 */
export function seatbeltProfile(policy: SandboxPolicy, proxyPort: number | undefined): string {
  const lines = [
    "(version 1)",
    "(allow default)",
    "(deny file-write*)",
    `(allow file-write* ${[...policy.writable.map(subpath), literal("/dev/null"), literal("/dev/tty"), subpath("/dev/fd")].join(" ")})`,
  ];
  const protectedPaths = [...policy.readOnly, ...policy.placeholders];
  if (protectedPaths.length > 0) lines.push(`(deny file-write* ${protectedPaths.map(subpath).join(" ")})`);
  if (policy.pinned.length > 0) {
    lines.push(
      `(deny file-write-unlink file-write-create file-write-mode ${policy.pinned.map(literal).join(" ")})`,
    );
  }
  if (policy.masked.length > 0) {
    const masked = policy.masked.map((m) => (m.kind === "dir" ? subpath(m.path) : literal(m.path)));
    lines.push(`(deny file-read* file-write* ${masked.join(" ")})`);
  }
  if (policy.unmasked.length > 0) lines.push(`(allow file-read* ${policy.unmasked.map(subpath).join(" ")})`);
  lines.push("(deny network*)", '(allow network* (local ip "localhost:*") (remote ip "localhost:*"))');
  // Loopback servers of the user's are outside the sandbox as much as any host: only the proxy is reachable.
  lines.push('(deny network-outbound (remote ip "localhost:*"))');
  if (proxyPort !== undefined) lines.push(`(allow network-outbound (remote ip "localhost:${proxyPort}"))`);
  return `${lines.join("\n")}\n`;
}
