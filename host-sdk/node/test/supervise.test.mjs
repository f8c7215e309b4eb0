// Supervision against the real binary: a killed plugin is restarted and
// serves again, calls while it is down fail at once with the reason, Close
// leaves no process behind, and a plugin whose host dies exits by itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { Manager, PluginUnavailableError } from "../dist/index.js";
import { PLUGIN_BIN, ScriptedHost, rpc, msg, alive, eventually, a2aConfig, answerOf } from "./helpers.mjs";

test("a killed plugin is restarted with a fresh process and serves again", async () => {
  const host = new ScriptedHost();
  const events = [];
  const m = new Manager({ paths: [PLUGIN_BIN], host, config: { a2a: a2aConfig() }, restart: { baseBackoffMs: 50 }, onEvent: (e) => events.push(e) });
  try {
    await m.start();
    const p = m.plugin("a2a");
    host.platform = p.platform();
    const first = p.pid;
    process.kill(first, "SIGKILL");
    await eventually(() => p.state === "ready" && p.pid !== first && p.pid > 0, 20000, "the restarted plugin");
    const crash = events.find((e) => e.kind === "crashed");
    assert.match(crash.error.message, /crashed: signal SIGKILL/);
    assert.equal(events.filter((e) => e.kind === "ready").length, 2);
    assert.ok(!alive(first));
    const r = await rpc(p.endpoints[0], "SendMessage", msg("after the restart"));
    assert.equal(r.result?.task?.status?.state, "TASK_STATE_COMPLETED", JSON.stringify(r));
    assert.equal(answerOf(r.result.task), "echo: after the restart");
  } finally {
    await m.close();
  }
});

test("calls to a plugin that is down fail at once with why", async () => {
  const m = new Manager({ paths: [PLUGIN_BIN], host: new ScriptedHost(), config: { a2a: a2aConfig() }, restart: { maxRestarts: -1 } });
  try {
    await m.start();
    const p = m.plugin("a2a");
    const pid = p.pid;
    process.kill(pid, "SIGKILL");
    await eventually(() => p.state === "failed", 10000, "the plugin to be marked failed");
    const err = await p.platform().send({ platform: "a2a", chatId: "c", taskId: "t", kind: "SEND_KIND_FINAL", text: "x" }).catch((e) => e);
    assert.ok(err instanceof PluginUnavailableError, String(err));
    assert.match(err.message, /unavailable \(failed: plugin "a2a" crashed: signal SIGKILL.*restarts are disabled\)/);
    await assert.rejects(p.toolset().listTools(), PluginUnavailableError);
  } finally {
    await m.close();
  }
});

test("close drains the plugin and leaves no process and no socket behind", async () => {
  const m = new Manager({ paths: [PLUGIN_BIN], host: new ScriptedHost(), config: { a2a: a2aConfig() } });
  await m.start();
  const p = m.plugin("a2a");
  const pid = p.pid;
  const dir = m.socketDir;
  assert.equal(fs.statSync(dir).mode & 0o777, 0o700, "the socket directory is private");
  assert.ok(fs.readdirSync(dir).length >= 2, "the plugin's and the host's sockets are in it");
  await m.close();
  assert.equal(p.state, "stopped");
  await eventually(() => !alive(pid), 5000, "the plugin process to exit");
  assert.ok(!fs.existsSync(dir));
  await assert.rejects(p.platform().connect(), PluginUnavailableError);
});

test("a plugin whose host is killed exits by itself (no orphan)", async () => {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, "fixtures/host-child.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (c) => reject(new Error(`the host exited (${c}) before starting the plugin`)));
  });
  const { pid, url } = JSON.parse(line);
  assert.ok(alive(pid));
  assert.equal((await rpc(url, "SendMessage", msg("while the host lives"))).result?.task?.status?.state, "TASK_STATE_COMPLETED");
  child.kill("SIGKILL");
  await eventually(() => !alive(pid), 15000, "the orphaned plugin to exit");
});

test("an executable that is not a plugin is skipped with the reason", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hostsdk-skip-"));
  const script = path.join(dir, "not-a-plugin");
  fs.writeFileSync(script, "#!/bin/sh\necho hello\n", { mode: 0o755 });
  fs.writeFileSync(path.join(dir, "README"), "not executable", { mode: 0o644 });
  fs.copyFileSync(PLUGIN_BIN, path.join(dir, "a2a-plugin"));
  fs.chmodSync(path.join(dir, "a2a-plugin"), 0o755);
  const events = [];
  const m = new Manager({ dir, host: new ScriptedHost(), config: { a2a: a2aConfig() }, onEvent: (e) => events.push(e) });
  try {
    await m.start();
    assert.deepEqual(m.plugins().map((p) => p.name), ["a2a"]);
    const skipped = events.find((e) => e.kind === "skipped");
    assert.equal(skipped.plugin, script);
    assert.match(skipped.error.message, /printed "hello" instead of a go-plugin handshake line/);
  } finally {
    await m.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a plugin that refuses its configuration fails start with the plugin's reason", async () => {
  const m = new Manager({ paths: [PLUGIN_BIN], host: new ScriptedHost(), config: { a2a: { port: 0, no_such_setting: 1 } } });
  try {
    await assert.rejects(m.start(), /plugin "a2a" refused its configuration.*no_such_setting/);
    assert.equal(m.plugin("a2a").state, "failed");
  } finally {
    await m.close();
  }
});
