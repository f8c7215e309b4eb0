// The manifest's static tool list (contracts.tools) and tools.json must be
// what the binary's ListTools offers: OpenClaw refuses a tool a plugin
// registers without declaring it, and would offer one the binary lacks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { PLUGIN_BIN } from "../../node/test/helpers.mjs";

const root = path.resolve(import.meta.dirname, "..");

test("openclaw.plugin.json and tools.json match the binary's tools", () => {
  // --check exits 1, naming the files, when they drifted.
  execFileSync(process.execPath, [path.join(root, "scripts/gen-manifest.mjs"), PLUGIN_BIN, "--check"], { stdio: "pipe" });
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "openclaw.plugin.json"), "utf8"));
  const tools = JSON.parse(fs.readFileSync(path.join(root, "tools.json"), "utf8")).tools;
  assert.deepEqual(manifest.contracts.tools, tools.map((t) => t.name));
  assert.ok(manifest.contracts.tools.includes("a2a_call"));
  assert.notEqual(manifest.channels[0], "a2a", "the bundled A2A channel's id is not ours");
});

test("a drifted manifest fails the check with what to run", () => {
  const file = path.join(root, "tools.json");
  const saved = fs.readFileSync(file, "utf8");
  try {
    const t = JSON.parse(saved);
    t.tools.pop();
    fs.writeFileSync(file, JSON.stringify(t, null, 2) + "\n");
    assert.throws(
      () => execFileSync(process.execPath, [path.join(root, "scripts/gen-manifest.mjs"), PLUGIN_BIN, "--check"], { stdio: "pipe" }),
      (e) => /tools\.json differ from the tools of .*run make openclaw-manifest/.test(String(e.stderr)),
    );
  } finally {
    fs.writeFileSync(file, saved);
  }
});
