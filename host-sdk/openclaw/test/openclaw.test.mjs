// The plugin in the real OpenClaw gateway (npm openclaw, pinned), with a
// fake OpenAI-compatible model on loopback and a second A2A agent: the
// official A2A JS SDK client talks to the plugin's endpoint and the live
// OpenClaw agent answers.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CancelTaskRequest, GetTaskRequest, SendMessageRequest, TaskState, taskStateToJSON } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Manager } from "@a2a-plugin/host-sdk";
import { ScriptedHost, a2aConfig, PLUGIN_BIN } from "../../node/test/helpers.mjs";
import { startFakeModel, lastUserText, requestText, userWords } from "./fake-model.mjs";
import { startGateway } from "./gateway.mjs";

let model, gateway, peer, peerHost, client, card;

const request = (text, extra = {}) => SendMessageRequest.fromJSON({
  message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra.message },
  ...(extra.configuration ? { configuration: extra.configuration } : {}),
});
const stateOf = (t) => taskStateToJSON(t.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
/** What a task says about itself, for failure messages: its status text and the gateway's log. */
const explain = (t) => `task ${t.id} is ${stateOf(t)}: ${textOf(t.status?.message?.parts)}\n--- gateway log:\n${gateway.log()}`;
const textOf = (parts) => (parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
// The agent's answer: the task's "answer" artifact.
const answerOf = (task) => textOf(((task.artifacts ?? []).find((a) => a.name === "answer") ?? task.artifacts?.[0])?.parts);

before(async () => {
  model = await startFakeModel();
  // The second agent the OpenClaw agent delegates to: the same binary on
  // a scripted host of the Node host library.
  peerHost = new ScriptedHost();
  peer = new Manager({ paths: [PLUGIN_BIN], host: peerHost, config: { a2a: a2aConfig({ agent_name: "Peer" }) } });
  await peer.start();
  peerHost.platform = peer.plugin("a2a").platform();
  gateway = await startGateway({
    modelURL: model.url,
    pluginConfig: {
      agent_name: "OpenClaw Agent",
      // A first turn on a busy two-core machine can take tens of seconds.
      request_timeout: "300s",
      allow_loopback_urls: true,
      a2a_agents: [{ name: "peer", url: peer.plugin("a2a").endpoints[0] }, { name: "peer2", url: peer.plugin("a2a").endpoints[0] }],
    },
  });
  const resolver = new DefaultAgentCardResolver();
  card = await resolver.resolve(gateway.a2aURL);
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory()], cardResolver: resolver,
  }));
  client = await factory.createFromAgentCard(card);
});

after(async () => {
  await gateway?.stop();
  await peer?.close();
  await model?.close();
});

/** The fake model's requests whose last user words are words. */
const requestsFor = (words) => model.requests.filter((r) => userWords(lastUserText(r.messages ?? [])) === words);

test("the card is the plugin's, served for the OpenClaw agent, and says it cannot cancel running work", () => {
  assert.equal(card.name, "OpenClaw Agent");
  assert.equal(card.capabilities?.streaming, true);
  const ext = card.capabilities?.extensions?.find((e) => e.uri.endsWith("/no-running-cancel/v1"));
  assert.ok(ext, JSON.stringify(card.capabilities));
  assert.match(ext.description, /cannot stop a turn it is running/);
});

test("SendMessage from the JS SDK client is answered by the OpenClaw agent", async (t) => {
  const res = await client.sendMessage(request("hello openclaw"));
  assert.equal(res.payload?.$case ?? "task", "task");
  const task = res.payload ? res.payload.value : res;
  assert.equal(stateOf(task), "TASK_STATE_COMPLETED", explain(task));
  assert.equal(answerOf(task), "fake reply: hello openclaw");
  assert.equal(requestsFor("hello openclaw").length, 1, "the model was asked once");
});

test("a streamed message streams the agent's answer", async () => {
  const events = [];
  let answer;
  for await (const ev of client.sendMessageStream(request("stream this please"))) {
    const p = ev.payload;
    events.push(p.$case === "task" || p.$case === "statusUpdate" ? `${p.$case}:${stateOf(p.value)}` : p.$case);
    if (p.$case === "artifactUpdate" && p.value.artifact?.name === "answer") answer = p;
  }
  assert.equal(events[0], "task:TASK_STATE_SUBMITTED", events.join(" "));
  assert.ok(events.includes("statusUpdate:TASK_STATE_WORKING"), events.join(" "));
  assert.equal(events.at(-1), "statusUpdate:TASK_STATE_COMPLETED", events.join(" "));
  assert.ok(events.includes("artifactUpdate"), events.join(" "));
  assert.equal(textOf(answer.value.artifact.parts), "fake reply: stream this please");
});

test("two turns in one context share the OpenClaw conversation; another context does not", async () => {
  const first = await client.sendMessage(request("my name is Ada"));
  const t1 = first.payload ? first.payload.value : first;
  assert.equal(stateOf(t1), "TASK_STATE_COMPLETED", explain(t1));
  const second = await client.sendMessage(request("what is my name", { message: { contextId: t1.contextId } }));
  const t2 = second.payload ? second.payload.value : second;
  assert.equal(t2.contextId, t1.contextId);
  assert.equal(answerOf(t2), "fake reply: what is my name");
  const [seen] = requestsFor("what is my name");
  assert.match(requestText(seen), /my name is Ada/, "the model saw the earlier turn");
  assert.match(requestText(seen), /fake reply: my name is Ada/, "and its own answer to it");

  const other = await client.sendMessage(request("who am I"));
  const t3 = other.payload ? other.payload.value : other;
  assert.notEqual(t3.contextId, t1.contextId);
  const [fresh] = requestsFor("who am I");
  assert.doesNotMatch(requestText(fresh), /my name is Ada/, "a new context is a new conversation");
});

test("the model's call to a2a_call reaches the second agent and its answer comes back", async () => {
  const res = await client.sendMessage(request("ask the peer peer to: summarise the weather"));
  const task = res.payload ? res.payload.value : res;
  assert.equal(stateOf(task), "TASK_STATE_COMPLETED", explain(task));
  const hm = await peerHost.waitFor((c) => c.kind === "handleMessage" && c.req.parts.some((p) => p.text === "summarise the weather"));
  assert.equal(hm.req.platform, "a2a");
  assert.match(answerOf(task), /^the peer answered: .*echo: summarise the weather/s);
});

test("a2a_route asks OpenClaw's model to choose a peer (HostService.Complete)", async () => {
  const res = await client.sendMessage(request("find the right peer for: zqxv wvut"));
  const task = res.payload ? res.payload.value : res;
  assert.equal(stateOf(task), "TASK_STATE_COMPLETED", explain(task));
  assert.ok(model.requests.some((r) => /Candidate agents:/.test(requestText(r))), "the routing question reached OpenClaw's model");
  assert.match(answerOf(task), /Route: peer2 \(matched by model/);
});

test("CancelTask of a task the OpenClaw agent is running is refused, and the run finishes", async () => {
  const key = randomUUID().slice(0, 8);
  const res = await client.sendMessage(request(`hold until released ${key}`, { configuration: { returnImmediately: true } }));
  const task = res.payload ? res.payload.value : res;
  // Wait until the model (so the OpenClaw run) has the turn.
  for (let i = 0; i < 200 && requestsFor(`hold until released ${key}`).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(requestsFor(`hold until released ${key}`).length, 1, "the agent's run started");
  const err = await client.cancelTask(CancelTaskRequest.fromJSON({ id: task.id })).then(() => undefined, (e) => e);
  assert.ok(err, "CancelTask must not succeed while the run goes on");
  assert.match(String(err.message ?? err), /cannot stop a running turn/);
  const during = await client.getTask(GetTaskRequest.fromJSON({ id: task.id }));
  assert.equal(stateOf(during), "TASK_STATE_WORKING");
  model.release(key);
  let done;
  for (let i = 0; i < 200; i++) {
    done = await client.getTask(GetTaskRequest.fromJSON({ id: task.id }));
    if (stateOf(done) !== "TASK_STATE_WORKING" && stateOf(done) !== "TASK_STATE_SUBMITTED") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(stateOf(done), "TASK_STATE_COMPLETED", explain(done));
  assert.equal(answerOf(done), `fake reply: hold until released ${key}`);
});
