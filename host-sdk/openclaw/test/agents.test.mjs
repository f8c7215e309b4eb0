// OpenClaw's several agents through the plugin (contract 1.4): a real
// gateway with two agents, each on its own model of the fake provider; the
// binary serves each as its own A2A agent on the one port, and the official
// A2A JS SDK client reaches each by its URL and by tenant.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { GetTaskRequest, SendMessageRequest, TaskState, taskStateToJSON } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { startFakeModel, lastUserText, userWords } from "./fake-model.mjs";
import { startGateway } from "./gateway.mjs";

let model, gateway;

const request = (text, tenant = "") => {
  const r = SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }] } });
  r.tenant = tenant;
  return r;
};
const stateOf = (t) => taskStateToJSON(t.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
const textOf = (parts) => (parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const answerOf = (task) => textOf(((task.artifacts ?? []).find((a) => a.name === "answer") ?? task.artifacts?.[0])?.parts);
const taskOf = (res) => (res.payload ? res.payload.value : res);
/** The model the fake provider was asked with for the turn whose last user words are words. */
const modelsFor = (words) => model.requests.filter((r) => userWords(lastUserText(r.messages ?? [])) === words).map((r) => r.model);

async function clientFor(cardPath) {
  const resolver = new DefaultAgentCardResolver();
  const card = await resolver.resolve(gateway.a2aURL, cardPath);
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory()], cardResolver: resolver,
  }));
  return { card, client: await factory.createFromAgentCard(card) };
}

before(async () => {
  model = await startFakeModel();
  gateway = await startGateway({
    modelURL: model.url,
    models: ["fake-research"],
    agents: {
      main: { default: true, name: "Main" },
      research: { name: "Research", model: "fake/fake-research" },
    },
    pluginConfig: { request_timeout: "300s" },
  });
});

after(async () => {
  await gateway?.stop();
  await model?.close();
});

test("each OpenClaw agent has its own card: the default at the root, the other under /agents/{id}/", async () => {
  const root = await clientFor("/.well-known/agent-card.json");
  const research = await clientFor("/agents/research/.well-known/agent-card.json");
  assert.equal(root.card.name, "Main");
  assert.equal(research.card.name, "Research");
  const jsonrpc = research.card.supportedInterfaces.find((i) => i.protocolBinding === "JSONRPC");
  assert.equal(jsonrpc.url, `${gateway.a2aURL}/agents/research/`);
});

test("a message to an agent's URL runs on that OpenClaw agent; by tenant too; its task is unknown to the other", async () => {
  const research = await clientFor("/agents/research/.well-known/agent-card.json");
  const byURL = taskOf(await research.client.sendMessage(request("hello research")));
  assert.equal(stateOf(byURL), "TASK_STATE_COMPLETED", `${textOf(byURL.status?.message?.parts)}\n${gateway.log()}`);
  assert.equal(answerOf(byURL), "fake reply: hello research");
  assert.deepEqual(modelsFor("hello research"), ["fake-research"], "research's turn ran on research's model");

  const root = await clientFor("/.well-known/agent-card.json");
  const byTenant = taskOf(await root.client.sendMessage(request("research by tenant", "research")));
  assert.equal(stateOf(byTenant), "TASK_STATE_COMPLETED", gateway.log());
  assert.deepEqual(modelsFor("research by tenant"), ["fake-research"]);

  const main = taskOf(await root.client.sendMessage(request("hello main")));
  assert.equal(stateOf(main), "TASK_STATE_COMPLETED", gateway.log());
  assert.deepEqual(modelsFor("hello main"), ["fake-model"], "main's turn ran on main's model");

  await assert.rejects(root.client.getTask(GetTaskRequest.fromJSON({ id: byURL.id })), /not found/i);
  const own = await research.client.getTask(GetTaskRequest.fromJSON({ id: byURL.id }));
  assert.equal(own.id, byURL.id);
});
