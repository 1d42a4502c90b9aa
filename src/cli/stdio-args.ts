/** Options after `mcp` that mean something other than serving on stdio. */
const NOT_STDIO = new Set(["--http", "-h", "--help"]);

/**
 * Whether `argv` (process.argv) starts the stdio MCP server. A module of its own, without imports: the
 * entry's first module asks it before anything else loads (hold-compilers.ts).
 */
export function servesStdio(argv: readonly string[]): boolean {
  return argv[2] === "mcp" && !argv.slice(3).some((arg) => NOT_STDIO.has(arg.split("=")[0]!));
}
