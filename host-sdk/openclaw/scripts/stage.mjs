// Builds the installable package directory: the compiled plugin, its
// manifest and tool list, the a2a-plugin binary and the production
// dependencies (the host library installed as a copy, not a link), so
// `openclaw plugins install <dir>` needs nothing else.
//
//   node scripts/stage.mjs <a2a-plugin binary> <output directory>
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const [binary, outArg] = process.argv.slice(2);
if (!binary || !outArg) {
  console.error("usage: stage.mjs <a2a-plugin binary> <output directory>");
  process.exit(2);
}
const out = path.resolve(outArg);
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(path.join(out, "bin"), { recursive: true });

const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
delete pkg.devDependencies;
delete pkg.scripts;
pkg.dependencies["@a2a-plugin/host-sdk"] = "file:" + path.resolve(root, "../node");
fs.writeFileSync(path.join(out, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
fs.cpSync(path.join(root, "dist"), path.join(out, "dist"), { recursive: true, filter: (f) => !f.endsWith(".map") });
for (const f of ["openclaw.plugin.json", "tools.json"]) fs.copyFileSync(path.join(root, f), path.join(out, f));
fs.copyFileSync(binary, path.join(out, "bin", "a2a-plugin"));
fs.chmodSync(path.join(out, "bin", "a2a-plugin"), 0o755);
execFileSync("npm", ["install", "--omit=dev", "--install-links", "--no-audit", "--no-fund", "--no-package-lock"], { cwd: out, stdio: "inherit" });
// The copy keeps the dependency spec pointing at this checkout; make the
// installed package self-describing instead.
pkg.dependencies["@a2a-plugin/host-sdk"] = JSON.parse(fs.readFileSync(path.join(out, "node_modules/@a2a-plugin/host-sdk/package.json"), "utf8")).version;
fs.writeFileSync(path.join(out, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
console.log(`staged the OpenClaw plugin in ${out}`);
