// The plugin starts the binary of the machine it runs on: a release
// package carries bin/<goos>-<goarch>/a2a-plugin[.exe] for every target
// (make release), a package built from a checkout bin/a2a-plugin.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { binaryFor } from "../dist/ids.js";

function pkg(files) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "oc-bin-"));
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    fs.writeFileSync(path.join(root, f), "");
  }
  return { root, url: pathToFileURL(root + path.sep) };
}

test("a release package picks the binary of the platform and CPU in Go's names", () => {
  const { root, url } = pkg(["bin/linux-amd64/a2a-plugin", "bin/darwin-arm64/a2a-plugin", "bin/windows-arm64/a2a-plugin.exe"]);
  assert.equal(binaryFor("linux", "x64", url), path.join(root, "bin/linux-amd64/a2a-plugin"));
  assert.equal(binaryFor("darwin", "arm64", url), path.join(root, "bin/darwin-arm64/a2a-plugin"));
  assert.equal(binaryFor("win32", "arm64", url), path.join(root, "bin/windows-arm64/a2a-plugin.exe"));
});

test("a package built from a checkout, or a machine the release lacks, falls back to bin/a2a-plugin", () => {
  const { root, url } = pkg(["bin/a2a-plugin", "bin/linux-amd64/a2a-plugin"]);
  assert.equal(binaryFor("linux", "arm64", url), path.join(root, "bin/a2a-plugin"));
  assert.equal(binaryFor("freebsd", "x64", url), path.join(root, "bin/a2a-plugin"));
});
