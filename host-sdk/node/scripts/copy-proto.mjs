// Copies the contract's .proto and go-plugin's wire services
// (host-sdk/proto/goplugin.proto) into dist/proto at build time, so the
// built package carries what it loads at run time (no copy is committed).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
for (const [from, to] of [
  ["../../../proto/agentplugin/v1/agentplugin.proto", "../dist/proto/agentplugin/v1/agentplugin.proto"],
  // go-plugin's wire services, the one copy the Python host library uses too.
  ["../../proto/goplugin.proto", "../dist/proto/goplugin.proto"],
]) {
  const dst = path.resolve(here, to);
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  fs.copyFileSync(path.resolve(here, from), dst);
}
