// A killed host cannot remove its socket directory; a start sweeps those
// whose owner is dead, and only those.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { OWNER_FILE, makeOwnedDir, sweepDead } from "../dist/index.js";

test("only the socket directories of dead owners are swept", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sweep-test-"));
  try {
    const dead = spawnSync("true").pid; // exited and reaped: its pid names no process
    const owned = (name, pid) => {
      const d = path.join(root, name);
      fs.mkdirSync(d, { mode: 0o700 });
      if (pid !== undefined) fs.writeFileSync(path.join(d, OWNER_FILE), `${pid}\n`);
      return d;
    };
    const gone = owned("agentplugin-gone", dead);
    const kept = [owned("agentplugin-live", process.pid), owned("agentplugin-unmarked"), owned("agentplugin-garbage", "x"), owned("other-gone", dead)];
    assert.deepEqual(sweepDead("agentplugin-", root), [gone]);
    for (const d of kept) assert.ok(fs.existsSync(d), d);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("an owned directory names this process", () => {
  const d = makeOwnedDir("agentplugin-test-");
  try {
    assert.equal(fs.readFileSync(path.join(d, OWNER_FILE), "utf8").trim(), String(process.pid));
    assert.equal(fs.statSync(d).mode & 0o777, 0o700);
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
});
