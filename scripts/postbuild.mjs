// Makes the built CLI executable so `npx cc-tools` works straight after `npm ci`.
import { chmodSync, existsSync } from "node:fs";

const cli = new URL("../dist/cli/main.js", import.meta.url);
if (existsSync(cli)) chmodSync(cli, 0o755);
