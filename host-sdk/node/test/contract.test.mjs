// The host library against the real a2a-plugin binary: every RPC of the
// contract, host to plugin and plugin to host, with the protocol 1.2 call
// streams and the unary calls of a 1.1 host.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { Manager, PROTOCOL_MINOR, CONTRACT_PROTO } from "../dist/index.js";
import { PLUGIN_BIN, ScriptedHost, rpc, msg, eventually, a2aConfig, answerOf } from "./helpers.mjs";

const logs = [];
const logger = {
  debug: (m, f) => logs.push({ level: "debug", m, f }), info: (m, f) => logs.push({ level: "info", m, f }),
  warn: (m, f) => logs.push({ level: "warn", m, f }), error: (m, f) => logs.push({ level: "error", m, f }),
};

let peer, peerHost, host, m, a2a, url;

before(async () => {
  // The peer the tools call: a second agent on its own host.
  peerHost = new ScriptedHost();
  peer = new Manager({ paths: [PLUGIN_BIN], host: peerHost, config: { a2a: a2aConfig({ agent_name: "Peer" }) } });
  await peer.start();
  peerHost.platform = peer.plugin("a2a").platform();
  const peerURL = peer.plugin("a2a").endpoints[0];

  host = new ScriptedHost({
    tools: [{ name: "host_search", description: "Searches the host's notes.", parametersJsonSchema: '{"type":"object"}', toolset: "notes", tags: ["search"] }],
    complete: "b",
    delegations: true,
  });
  process.env.A2A_TEST_FROM_ENV = "inherited";
  process.env.HOSTSDK_TEST_SECRET = "must-not-leak";
  m = new Manager({
    paths: [PLUGIN_BIN],
    host,
    logger,
    logLevel: "debug",
    // advertised_toolsets: the host's tools on the card (an opt-in).
    config: { a2a: a2aConfig({ agent_name: "Under Test", advertised_toolsets: ["*"], a2a_agents: [{ name: "b", url: peerURL }, { name: "c", url: peerURL }] }) },
  });
  await m.start();
  a2a = m.plugin("a2a");
  host.platform = a2a.platform();
  url = a2a.endpoints[0];
});

after(async () => {
  await m?.close();
  await peer?.close();
});

test("the proto header's protocol-version equals PROTOCOL_MINOR", () => {
  const header = /protocol-version: 1\.(\d+)/.exec(fs.readFileSync(CONTRACT_PROTO, "utf8"));
  assert.equal(Number(header[1]), PROTOCOL_MINOR);
});

test("Describe, Configure and Connect bring the plugin up", () => {
  assert.equal(a2a.state, "ready");
  assert.equal(a2a.describe.name, "a2a");
  assert.equal(a2a.protocolMinor, PROTOCOL_MINOR);
  assert.deepEqual([...a2a.describe.capabilities].sort(), ["CAPABILITY_PLATFORM", "CAPABILITY_TOOLSET"]);
  assert.ok(a2a.describe.envPrefixes.includes("A2A_"));
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+/);
  assert.ok(a2a.pid > 0);
});

test("the plugin's environment is the allowlist plus its declared prefixes", () => {
  const env = fs.readFileSync(`/proc/${a2a.pid}/environ`, "utf8").split("\0");
  assert.ok(env.includes("A2A_TEST_FROM_ENV=inherited"), "a variable of a declared prefix (A2A_) is passed");
  assert.ok(!env.some((kv) => kv.startsWith("HOSTSDK_TEST_SECRET=")), "an unlisted variable is not");
  assert.ok(env.some((kv) => kv.startsWith("PATH=")));
  assert.ok(env.includes("AGENTPLUGIN_LOG_LEVEL=debug"));
});

test("the plugin's stderr is drained into the host's log", async () => {
  await eventually(() => logs.some((l) => l.m === "serving A2A"), 5000, "the plugin's 'serving A2A' log line");
});

test("HandleMessage reaches the host and Send (with ends_turn) answers it", async () => {
  const r = await rpc(url, "SendMessage", msg("progress then answer"));
  assert.equal(r.result?.task?.status?.state, "TASK_STATE_COMPLETED", JSON.stringify(r));
  assert.equal(answerOf(r.result.task), "echo: progress then answer");
  const hm = host.calls.find((c) => c.kind === "handleMessage" && c.req.taskId === r.result.task.id);
  assert.equal(hm.req.chatId, r.result.task.contextId, "one conversation per A2A context");
  assert.equal(hm.req.unattended, true);
  assert.equal(hm.req.platform, "a2a");
  assert.equal(hm.req.trustTier, "TRUST_TIER_LOCAL");
  assert.equal(hm.req.parts[0].text, "progress then answer");
  // A 1.3 plugin gets Send on the SendStream call stream, and it stayed usable.
  assert.ok(a2a.current().sends && !a2a.current().sends.unaryOnly, "Send goes over the call stream");
});

test("a PROGRESS Send streams as a WORKING update before the answer", async () => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0", accept: "text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "SendStreamingMessage", params: msg("progress while streaming") }),
  });
  const events = (await res.text()).split("\n").filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)).result);
  const progress = events.map((e) => e.statusUpdate?.status?.message?.parts?.[0]?.text).filter(Boolean);
  assert.deepEqual(progress, ["working on it"], JSON.stringify(events));
  const answer = events.find((e) => e.artifactUpdate?.artifact?.name === "answer");
  assert.equal(answer?.artifactUpdate.artifact.parts[0].text, "echo: progress while streaming", JSON.stringify(events));
  assert.ok(events.indexOf(answer) > events.findIndex((e) => e.statusUpdate?.status?.message), "progress comes before the answer");
  assert.equal(events.at(-1).statusUpdate.status.state, "TASK_STATE_COMPLETED");
});

test("ProcessingComplete FAILURE fails the task", async () => {
  const r = await rpc(url, "SendMessage", msg("please fail"));
  assert.equal(r.result?.task?.status?.state, "TASK_STATE_FAILED", JSON.stringify(r));
});

test("CancelTask reaches the host as CancelTurn", async () => {
  const r = await rpc(url, "SendMessage", { ...msg("hang until cancelled"), configuration: { returnImmediately: true } });
  const id = r.result.task.id;
  await host.waitFor((c) => c.kind === "handleMessage" && c.req.taskId === id);
  const c = await rpc(url, "CancelTask", { id });
  assert.equal(c.result?.status?.state, "TASK_STATE_CANCELED", JSON.stringify(c));
  const ct = await host.waitFor((c) => c.kind === "cancelTurn" && c.req.taskId === id);
  assert.equal(ct.req.chatId, r.result.task.contextId);
});

test("HostService.ListTools feeds the Agent Card's skills when advertised", async () => {
  const card = await (await fetch(new URL("/.well-known/agent-card.json", url))).json();
  assert.ok(card.skills.some((s) => s.id === "host_search"), JSON.stringify(card.skills));
});

test("ToolsetService.ListTools and CallTool, with RecordDelegation back to the host", async () => {
  const tools = await m.tools();
  for (const name of ["a2a_discover", "a2a_call", "a2a_list", "a2a_route"]) assert.ok(tools.some((t) => t.name === name && t.toolset === "a2a"), name);
  const call = tools.find((t) => t.name === "a2a_call");
  assert.equal(JSON.parse(call.parametersJsonSchema).type, "object");
  const res = await m.callTool({ name: "a2a_call", argumentsJson: JSON.stringify({ agent: "b", message: "hello b" }) });
  assert.equal(res.isError, false, res.content);
  assert.match(res.content, /echo: hello b/);
  const rd = await host.waitFor((c) => c.kind === "recordDelegation");
  assert.equal(rd.req.peer, "b");
  assert.equal(rd.req.state, "TASK_STATE_COMPLETED");
});

test("HostService.Complete answers a2a_route's semantic routing", async () => {
  const res = await m.callTool({ name: "a2a_route", argumentsJson: JSON.stringify({ message: "zqxv wvut" }) });
  assert.equal(res.isError, false, res.content);
  assert.match(res.content, /Route: b \(matched by model/);
  assert.ok(host.calls.some((c) => c.kind === "complete"));
});

test("a tool error reaches the model as isError, an unknown tool as a rejection", async () => {
  const res = await m.callTool({ name: "a2a_call", argumentsJson: "{}" });
  assert.equal(res.isError, true);
  await assert.rejects(m.callTool({ name: "no_such_tool", argumentsJson: "{}" }), /no plugin offers tool "no_such_tool"/);
});

test("a host of contract 1.1 gets unary HandleMessage calls and is served the same", async () => {
  const old = new ScriptedHost();
  const om = new Manager({ paths: [PLUGIN_BIN], host: old, hostInfo: { protocolMinor: 1 }, config: { a2a: a2aConfig() } });
  try {
    await om.start();
    old.platform = om.plugin("a2a").platform();
    const r = await rpc(om.plugin("a2a").endpoints[0], "SendMessage", msg("over unary calls"));
    assert.equal(r.result?.task?.status?.state, "TASK_STATE_COMPLETED", JSON.stringify(r));
  } finally {
    await om.close();
  }
});

test("a host that cannot cancel (contract 1.3) gets CancelTask of a running task refused", async () => {
  const h = new ScriptedHost();
  const hm = new Manager({ paths: [PLUGIN_BIN], host: h, hostInfo: { cancelTurnUnsupported: true }, config: { a2a: a2aConfig() } });
  try {
    await hm.start();
    h.platform = hm.plugin("a2a").platform();
    const u = hm.plugin("a2a").endpoints[0];
    const r = await rpc(u, "SendMessage", { ...msg("hang while asked to cancel"), configuration: { returnImmediately: true } });
    const id = r.result.task.id;
    await h.waitFor((c) => c.kind === "handleMessage" && c.req.taskId === id);
    const c = await rpc(u, "CancelTask", { id });
    assert.equal(c.error?.code, -32002, JSON.stringify(c));
    assert.match(c.error.message, /cannot stop a running turn/);
    assert.ok(!h.calls.some((x) => x.kind === "cancelTurn"), "no CancelTurn for a turn the host said it cannot stop");
    const card = await (await fetch(new URL("/.well-known/agent-card.json", u))).json();
    assert.ok(card.capabilities.extensions?.some((e) => e.uri.endsWith("/no-running-cancel/v1")), JSON.stringify(card.capabilities));
    // The run goes on and ends by itself.
    const out = h.hung.get(id);
    await h.platform.send({ ...out, kind: "SEND_KIND_FINAL", text: "done anyway", endsTurn: true });
    const g = await rpc(u, "GetTask", { id });
    assert.equal(g.result.status.state, "TASK_STATE_COMPLETED");
  } finally {
    await hm.close();
  }
});
