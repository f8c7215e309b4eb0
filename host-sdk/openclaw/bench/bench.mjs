// Latency of one A2A SendMessage round trip (blocking, answered by the
// agent), side by side on this machine, with the same fake model:
//
//   go-echo         the reference host (agenthost, Go host-sdk), echo agent
//   node-echo       the Node host library, an echo handler
//   go-model        agenthost, its agent asking the fake model (command agent: curl)
//   openclaw-model  the OpenClaw plugin in a real gateway, its agent asking the fake model
//
// node-echo − go-echo is what the Node host library adds per turn;
// openclaw-model / go-model is the cost of OpenClaw's agent run. A
// measurement, never a test: run with make bench-openclaw.
//
//   node bench/bench.mjs [rounds]   (env as make bench-openclaw sets it)
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Manager } from "@a2a-plugin/host-sdk";
import { PLUGIN_BIN } from "../../node/test/helpers.mjs";
import { startFakeModel } from "../test/fake-model.mjs";
import { freePort, startGateway } from "../test/gateway.mjs";

const rounds = Number(process.argv[2] ?? 40);
const warmup = 5;
const agenthost = process.env.AGENTHOST ?? path.resolve(import.meta.dirname, "../../../bin/agenthost");
const out = process.env.BENCH_OUT ?? path.resolve(import.meta.dirname, "../../../bench-results");

async function send(url, text) {
  const r = await fetch(url, {
    method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage",
      params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } } }),
  });
  const j = await r.json();
  if (j.result?.task?.status?.state !== "TASK_STATE_COMPLETED") throw new Error(`not completed: ${JSON.stringify(j).slice(0, 300)}`);
}

async function measure(name, url) {
  for (let i = 0; i < warmup; i++) await send(url, `warm up ${i}`);
  const ms = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await send(url, `round ${i}`);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const q = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))];
  const r = { name, rounds, median: q(0.5), p90: q(0.9), min: ms[0] };
  console.error(`${name}: median ${r.median.toFixed(1)} ms, p90 ${r.p90.toFixed(1)} ms`);
  return r;
}

async function agenthostRun(agent) {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-agenthost-"));
  fs.writeFileSync(path.join(dir, "host.yaml"), `plugins:\n  a2a:\n    port: ${port}\n    store: memory\n    rate_limit: 0\n`);
  const child = spawn(agenthost, ["run", "--plugins", path.dirname(PLUGIN_BIN), "--agent", agent, "--data", dir, "--config", path.join(dir, "host.yaml")],
    { stdio: ["ignore", "ignore", "ignore"] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 400; i++) {
    if (await fetch(`${url}/.well-known/agent-card.json`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, stop: async () => { child.kill("SIGINT"); await new Promise((r) => child.once("exit", r)); fs.rmSync(dir, { recursive: true, force: true }); } };
}

const model = await startFakeModel();
const results = [];
try {
  let h = await agenthostRun("echo");
  results.push(await measure("go-echo", h.url));
  await h.stop();

  const echo = {
    platform: undefined,
    async handleMessage(req) {
      setImmediate(() => echo.platform.send({ platform: req.platform, chatId: req.chatId, taskId: req.taskId, kind: "SEND_KIND_FINAL", text: "echo: " + req.text, endsTurn: true }));
      return { turnId: req.taskId };
    },
    async cancelTurn() { return { cancelled: false }; },
    async listTools() { return []; },
  };
  const m = new Manager({ paths: [PLUGIN_BIN], host: echo, config: { a2a: { port: 0, store: "memory", rate_limit: 0 } } });
  await m.start();
  echo.platform = m.plugin("a2a").platform();
  results.push(await measure("node-echo", m.plugin("a2a").endpoints[0]));
  await m.close();

  h = await agenthostRun(`command:curl -s --data-binary @- ${model.url}/reply`);
  results.push(await measure("go-model", h.url));
  await h.stop();

  const gw = await startGateway({ modelURL: model.url, pluginConfig: { store: "memory", rate_limit: 0, request_timeout: "300s" } });
  try {
    results.push(await measure("openclaw-model", gw.a2aURL));
  } finally {
    await gw.stop();
  }
} finally {
  await model.close();
}

const by = Object.fromEntries(results.map((r) => [r.name, r]));
const lines = [
  `SendMessage → answer, ${rounds} sequential blocking round trips each after ${warmup} warm-up (${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(2)})`,
  ...results.map((r) => `  ${r.name.padEnd(15)} median ${r.median.toFixed(1).padStart(7)} ms   p90 ${r.p90.toFixed(1).padStart(7)} ms   min ${r.min.toFixed(1).padStart(7)} ms`),
  `  Node host library added per turn (node-echo − go-echo, medians): ${(by["node-echo"].median - by["go-echo"].median).toFixed(2)} ms (ratio ${(by["node-echo"].median / by["go-echo"].median).toFixed(2)})`,
  `  OpenClaw vs the reference host with the same fake model (openclaw-model / go-model, medians): ${(by["openclaw-model"].median / by["go-model"].median).toFixed(1)}× (+${(by["openclaw-model"].median - by["go-model"].median).toFixed(1)} ms)`,
];
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(path.join(out, "openclaw.txt"), lines.join("\n") + "\n");
fs.writeFileSync(path.join(out, "openclaw.json"), JSON.stringify(results, null, 2) + "\n");
console.log(lines.join("\n"));
