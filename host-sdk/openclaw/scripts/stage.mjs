// Builds the installable package directory: the compiled plugin, its
// manifest and tool list, the a2a-plugin binary and the production
// dependencies (the host library installed as a copy, not a link), so
// `openclaw plugins install <dir>` needs nothing else.
//
//   node scripts/stage.mjs <a2a-plugin binary> <output directory>
//   node scripts/stage.mjs <binaries directory> <output directory> [--version V] [--bundle]
//
// A binaries directory (make release) holds <goos>-<goarch>/a2a-plugin[.exe]
// for every target; they go to bin/<goos>-<goarch>/, where the plugin picks
// the machine's (src/ids.ts: binaryFor). --version stamps the release
// version; --bundle makes the host library a bundled dependency, so that
// `npm pack` of the output carries it and installing the tarball needs no
// registry.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name) => { const i = args.indexOf(name); return i < 0 ? undefined : args.splice(i, 2)[1]; };
const version = flag("--version");
const bundle = args.includes("--bundle");
const [binary, outArg] = args.filter((a) => a !== "--bundle");
if (!binary || !outArg) {
  console.error("usage: stage.mjs <a2a-plugin binary | binaries directory> <output directory> [--version V] [--bundle]");
  process.exit(2);
}
const out = path.resolve(outArg);
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(path.join(out, "bin"), { recursive: true });

const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
delete pkg.devDependencies;
delete pkg.scripts;
pkg.dependencies["@a2a-plugin/host-sdk"] = "file:" + path.resolve(root, "../node");
if (version) pkg.version = version;
if (bundle) pkg.bundleDependencies = ["@a2a-plugin/host-sdk"];
fs.writeFileSync(path.join(out, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
fs.cpSync(path.join(root, "dist"), path.join(out, "dist"), { recursive: true, filter: (f) => !f.endsWith(".map") });
for (const f of ["openclaw.plugin.json", "tools.json"]) fs.copyFileSync(path.join(root, f), path.join(out, f));
if (fs.statSync(binary).isDirectory()) {
  for (const target of fs.readdirSync(binary).sort()) {
    for (const exe of ["a2a-plugin", "a2a-plugin.exe"]) {
      const from = path.join(binary, target, exe);
      if (!fs.existsSync(from)) continue;
      fs.mkdirSync(path.join(out, "bin", target), { recursive: true });
      fs.copyFileSync(from, path.join(out, "bin", target, exe));
      fs.chmodSync(path.join(out, "bin", target, exe), 0o755);
    }
  }
} else {
  fs.copyFileSync(binary, path.join(out, "bin", "a2a-plugin"));
  fs.chmodSync(path.join(out, "bin", "a2a-plugin"), 0o755);
}
execFileSync("npm", ["install", "--omit=dev", "--install-links", "--no-audit", "--no-fund", "--no-package-lock"], { cwd: out, stdio: "inherit" });
// The copy keeps the dependency spec pointing at this checkout; make the
// installed package self-describing instead.
pkg.dependencies["@a2a-plugin/host-sdk"] = JSON.parse(fs.readFileSync(path.join(out, "node_modules/@a2a-plugin/host-sdk/package.json"), "utf8")).version;
fs.writeFileSync(path.join(out, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
console.log(`staged the OpenClaw plugin in ${out}`);
