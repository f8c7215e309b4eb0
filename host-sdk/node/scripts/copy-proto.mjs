// Copies the contract's .proto into dist/proto at build time, so the built
// package carries the one contract it loads at run time (proto/ is the
// source of truth; no copy is committed).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const src = path.resolve(here, "../../../proto/agentplugin/v1/agentplugin.proto");
const dst = path.resolve(here, "../dist/proto/agentplugin/v1/agentplugin.proto");
fs.mkdirSync(path.dirname(dst), { recursive: true });
fs.copyFileSync(src, dst);
