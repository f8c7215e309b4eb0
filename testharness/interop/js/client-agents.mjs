// client-agents.mjs — talks to one agent of a host with several (served
// by one plugin on one port) with the official JS SDK client
// (@a2a-js/sdk), either by the agent's URL (its card under
// /agents/{id}/, whose interfaces point there; its gRPC interface names the
// agent as its tenant) or by tenant (the root card, every request's tenant
// set to the agent's id), over JSON-RPC, HTTP+JSON or gRPC.
//
// Usage: node client-agents.mjs <root URL> <agent id> <jsonrpc|rest|grpc> <url|tenant>
//        A2A_TOKEN=… adds "Authorization: Bearer …" to every request (over
//        gRPC as the `authorization` metadata).
//
// The agent is expected to answer a message with its text in capitals or
// as it is; the step reports the answer for the caller to check.
//
// Output: one JSON object per line and step ({"step": …, "ok": …}); then
// {"step":"done","requests":[…]} with "METHOD path" of every HTTP request.
import { GetTaskRequest } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { authFetch as makeAuthFetch, isTask, makeStep, report, request, stateOf, textOf } from './common.mjs';

const [root, agent, binding, mode] = process.argv.slice(2);
if (!root || !agent || !['jsonrpc', 'rest', 'grpc'].includes(binding) || !['url', 'tenant'].includes(mode)) {
  process.stderr.write('usage: node client-agents.mjs <root URL> <agent id> <jsonrpc|rest|grpc> <url|tenant>\n');
  process.exit(2);
}
const token = process.env.A2A_TOKEN ?? '';
const requests = [];
const authFetch = makeAuthFetch(token, (method, path) => requests.push(`${method} ${path}`));
const describe = (err) => ({
  error: String(err?.message ?? err),
  name: err?.name ?? '',
  statusCode: err?.statusCode ?? err?.cause?.code ?? 0,
});
const step = makeStep(describe);

const resolver = new DefaultAgentCardResolver({ fetchImpl: authFetch });
const cardPath = mode === 'url' ? `/agents/${agent}/.well-known/agent-card.json` : '/.well-known/agent-card.json';
let card;
await step('card', async () => {
  card = await resolver.resolve(root, cardPath);
  return {
    name: card.name,
    interfaces: (card.supportedInterfaces ?? []).map((i) => `${i.protocolBinding} ${i.url} ${i.tenant ?? ''}`.trim()),
  };
});
if (!card) {
  report('done', false, { requests });
  process.exit(1);
}

const bearer = {
  async before(args) {
    if (!token) return;
    args.options = {
      ...(args.options ?? {}),
      serviceParameters: { ...(args.options?.serviceParameters ?? {}), authorization: `Bearer ${token}` },
    };
  },
  async after() {},
};
const transport = {
  jsonrpc: () => new JsonRpcTransportFactory({ fetchImpl: authFetch }),
  rest: () => new RestTransportFactory({ fetchImpl: authFetch }),
  grpc: () => new GrpcTransportFactory(),
}[binding]();
const factory = new ClientFactory({
  transports: [transport],
  cardResolver: resolver,
  clientConfig: { interceptors: binding === 'grpc' ? [bearer] : [] },
});
const client = await factory.createFromAgentCard(card);
// By tenant, every request names the agent; by URL, none does (over
// gRPC the SDK copies the interface's tenant itself).
const tenant = mode === 'tenant' ? agent : '';

let taskId;
await step('send', async () => {
  const req = request(`hello ${agent} over ${binding} by ${mode}`);
  req.tenant = tenant;
  const res = await client.sendMessage(req);
  if (!isTask(res)) throw new Error(`expected a task, got ${JSON.stringify(res)}`);
  taskId = res.id;
  return { taskId: res.id, state: stateOf(res), answer: textOf(res.artifacts?.[0]?.parts) };
});

await step('get', async () => {
  const t = await client.getTask(GetTaskRequest.fromJSON({ id: taskId, tenant }));
  return { taskId: t.id, state: stateOf(t) };
});

report('done', true, { requests });
