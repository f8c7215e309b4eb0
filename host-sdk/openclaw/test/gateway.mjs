// A real OpenClaw gateway for the tests: a fresh OPENCLAW_HOME, our plugin
// installed into it with the same command make openclaw-plugin runs, the
// configuration (loopback gateway, a custom provider pointing at the fake
// model, the bundled a2a channel off, ours on) and the gateway process.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/** The openclaw CLI entry (openclaw.mjs of the pinned install). */
export const OPENCLAW_ENTRY = process.env.OPENCLAW_ENTRY;
/** The staged plugin package (make openclaw-plugin-package), or its packed .tgz (make release). */
export const STAGE = process.env.OPENCLAW_PLUGIN_STAGE;

export function requireSetup() {
  const missing = [];
  if (!OPENCLAW_ENTRY || !fs.existsSync(OPENCLAW_ENTRY)) missing.push(`OPENCLAW_ENTRY (${OPENCLAW_ENTRY ?? "unset"})`);
  // The staged package directory, or a packed one (a release's .tgz).
  const packed = STAGE?.endsWith(".tgz") && fs.existsSync(STAGE);
  if (!STAGE || (!packed && !fs.existsSync(path.join(STAGE, "openclaw.plugin.json")))) missing.push(`OPENCLAW_PLUGIN_STAGE (${STAGE ?? "unset"})`);
  if (missing.length) throw new Error(`the OpenClaw tests need ${missing.join(" and ")}: run them with make test-openclaw`);
}

/** A free loopback port (bound and released: the callers use it at once). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Runs the openclaw CLI with env; returns its output. */
export function openclaw(args, env) {
  return execFileSync(process.execPath, [OPENCLAW_ENTRY, ...args], { env: { ...process.env, ...env }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/**
 * Installs the plugin into a fresh OpenClaw home, configures it and starts
 * the gateway; resolves once the plugin's A2A endpoint serves its card.
 * agents, when given, is OpenClaw's agents.entries (several agents in the
 * one gateway); models are more model ids of the fake provider.
 */
export async function startGateway({ modelURL, pluginConfig, agents, models = [] }) {
  requireSetup();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "openclaw-test-"));
  const env = { OPENCLAW_HOME: home, OPENCLAW_NO_UPDATE_CHECK: "1" };
  const configFile = path.join(home, ".openclaw", "openclaw.json");
  // OpenClaw's own log file goes into the home (its default is /tmp/openclaw/).
  fs.mkdirSync(path.dirname(configFile), { recursive: true });
  fs.writeFileSync(configFile, JSON.stringify({ logging: { file: path.join(home, "openclaw.log") } }));
  openclaw(["plugins", "install", STAGE, "--force", "--accept-capabilities"], env);
  const cfg = JSON.parse(fs.readFileSync(configFile, "utf8"));
  const gatewayPort = await freePort();
  const a2aPort = await freePort();
  cfg.gateway = { mode: "local", port: gatewayPort, bind: "loopback", auth: { mode: "none" } };
  cfg.models = {
    mode: "replace",
    providers: {
      fake: {
        baseUrl: modelURL, apiKey: "not-a-secret", api: "openai-completions",
        models: ["fake-model", ...models].map((id) => ({ id, name: id, reasoning: false, input: ["text"], contextWindow: 32000, maxTokens: 1000 })),
      },
    },
  };
  cfg.agents = { ...(cfg.agents ?? {}), defaults: { ...(cfg.agents?.defaults ?? {}), model: { primary: "fake/fake-model" } } };
  if (agents) cfg.agents.entries = agents;
  cfg.channels = { ...(cfg.channels ?? {}), a2a: { enabled: false }, "a2a-plugin": { enabled: true } };
  cfg.plugins.entries["a2a-plugin"] = { ...cfg.plugins.entries["a2a-plugin"], enabled: true, config: { port: a2aPort, ...pluginConfig } };
  fs.writeFileSync(configFile, JSON.stringify(cfg, null, 2));

  const logFile = path.join(home, "gateway.log");
  const log = fs.openSync(logFile, "a");
  const child = spawn(process.execPath, [OPENCLAW_ENTRY, "gateway", "run", "--port", String(gatewayPort), "--bind", "loopback"], {
    env: { ...process.env, ...env }, stdio: ["ignore", log, log], detached: true,
  });
  const a2aURL = `http://127.0.0.1:${a2aPort}`;
  const exited = new Promise((r) => child.once("exit", (code, sig) => r(`exited (${sig ?? code})`)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // The gateway drains its runs on SIGTERM (for minutes, if one hangs);
      // the tests are over, so it gets a few seconds.
      child.kill("SIGTERM");
      const t = setTimeout(() => killGroup(child), 10_000);
      await exited;
      clearTimeout(t);
    }
    killGroup(child);
    fs.closeSync(log);
    // The gateway's log is kept in test-artifacts/openclaw/ for a look.
    const artifacts = path.resolve(import.meta.dirname, "../../../test-artifacts/openclaw");
    fs.mkdirSync(artifacts, { recursive: true });
    fs.copyFileSync(logFile, path.join(artifacts, "gateway.log"));
    // The plugin binary leaves with its host (watchdog); then the home goes,
    // unless KEEP_OPENCLAW_HOME asks to keep it.
    if (!process.env.KEEP_OPENCLAW_HOME) {
      await new Promise((r) => setTimeout(r, 1000));
      fs.rmSync(home, { recursive: true, force: true });
    }
  };
  // Slow on a loaded two-core machine: the first start compiles a lot.
  const deadline = Date.now() + 240_000;
  for (;;) {
    const up = await fetch(`${a2aURL}/.well-known/agent-card.json`).then((r) => r.ok, () => false);
    if (up) break;
    const gone = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 250))]);
    if (gone || Date.now() > deadline) {
      const last = tail(logFile);
      await stop();
      throw new Error(`the gateway ${gone ?? "did not serve the plugin's A2A endpoint within 240 s"}; its log:\n${last}`);
    }
  }
  return { home, a2aURL, logFile, log: () => tail(logFile, 80), stop };
}

/** Kills the gateway's process group: it and the plugin binary it runs. */
function killGroup(child) {
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}

function tail(file, n = 60) {
  try {
    return fs.readFileSync(file, "utf8").split("\n").slice(-n).join("\n");
  } catch {
    return "(no log)";
  }
}
