// client-check.mjs — drives an A2A v1.0 agent with the official JS SDK
// client (@a2a-js/sdk), a client we did not write, and reports what it saw.
// The Go tests of internal/server run it against our server.
//
// Usage: node client-check.mjs <agent base URL>
//        A2A_TOKEN=… adds "Authorization: Bearer …" to every request.
//
// The agent is expected to behave like the server tests' scripted agent:
// "progress …" streams progress and artifact chunks, "slow …" keeps working
// until canceled, anything else is echoed as "echo: <text>".
//
// Output: one JSON object per line and step, {"step": …, "ok": true|false,
// …details} or {"step": …, "ok": false, "error": "…"}; then {"step":"done"}.
import {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  SubscribeToTaskRequest,
} from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { authFetch as makeAuthFetch, isTask, makeStep, report, request, stateOf, textOf } from './common.mjs';

const base = process.argv[2];
if (!base) {
  process.stderr.write('usage: node client-check.mjs <agent base URL>\n');
  process.exit(2);
}
const token = process.env.A2A_TOKEN ?? '';

// authFetch adds the bearer token, when one is given, to every request.
const authFetch = makeAuthFetch(token);
const step = makeStep();

const resolver = new DefaultAgentCardResolver({ fetchImpl: authFetch });
let agentCard;
await step('card', async () => {
  const c = await resolver.resolve(base);
  agentCard = c;
  return {
    name: c.name,
    version: c.version,
    streaming: c.capabilities?.streaming === true,
    interfaces: (c.supportedInterfaces ?? []).map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`),
    skills: (c.skills ?? []).map((s) => s.id),
    securitySchemes: Object.keys(c.securitySchemes ?? {}),
  };
});
if (!agentCard) {
  report('done', false);
  process.exit(1);
}

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
    cardResolver: resolver,
  }),
);
const client = await factory.createFromAgentCard(agentCard);

let taskId;
await step('send', async () => {
  const res = await client.sendMessage(request('hello from js'));
  if (!isTask(res)) throw new Error(`expected a task, got ${JSON.stringify(res)}`);
  taskId = res.id;
  return {
    protocolVersion: client.protocolVersion,
    taskId: res.id,
    contextId: res.contextId,
    state: stateOf(res),
    answer: textOf(res.artifacts?.[0]?.parts),
    // What a client that joins every text of the task shows.
    allText: [
      textOf(res.status?.message?.parts),
      ...(res.artifacts ?? []).map((a) => textOf(a.parts)),
      ...(res.history ?? []).map((m) => textOf(m.parts)),
    ].filter((t) => t).join('\n'),
    history: res.history?.length ?? 0,
  };
});

await step('stream', async () => {
  const events = [];
  for await (const ev of client.sendMessageStream(request('progress from js'))) {
    const p = ev.payload;
    if (!p) throw new Error('stream event without payload');
    let label = p.$case;
    if (p.$case === 'task') label += ':' + stateOf(p.value);
    if (p.$case === 'statusUpdate') label += ':' + stateOf(p.value);
    events.push(label);
  }
  return { events };
});

await step('get', async () => {
  const t = await client.getTask(GetTaskRequest.fromJSON({ id: taskId, historyLength: 1 }));
  return { taskId: t.id, state: stateOf(t), history: t.history?.length ?? 0 };
});

await step('list', async () => {
  const l = await client.listTasks(ListTasksRequest.fromJSON({ pageSize: 10 }));
  return {
    count: l.tasks.length,
    totalSize: l.totalSize,
    nextPageToken: l.nextPageToken,
    ids: l.tasks.map((t) => t.id),
  };
});

await step('cancel', async () => {
  const res = await client.sendMessage(request('slow from js', { returnImmediately: true }));
  if (!isTask(res)) throw new Error(`expected a task, got ${JSON.stringify(res)}`);
  const before = stateOf(res);
  const t = await client.cancelTask(CancelTaskRequest.fromJSON({ id: res.id }));
  let again = '';
  try {
    await client.cancelTask(CancelTaskRequest.fromJSON({ id: res.id }));
    again = 'succeeded';
  } catch (err) {
    again = String(err?.message ?? err);
  }
  return { taskId: t.id, before, state: stateOf(t), secondCancel: again };
});

await step('resubscribe', async () => {
  const res = await client.sendMessage(request('slow resubscribe', { returnImmediately: true }));
  const events = [];
  for await (const ev of client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: res.id }))) {
    const p = ev.payload;
    events.push(p.$case === 'task' || p.$case === 'statusUpdate' ? `${p.$case}:${stateOf(p.value)}` : p.$case);
    if (events.length === 1) {
      // Let the Go side release the agent once we are subscribed.
      process.stdout.write(JSON.stringify({ step: 'subscribed', ok: true, taskId: res.id }) + '\n');
    }
  }
  return { taskId: res.id, events };
});

await step('unknown-task', async () => {
  try {
    await client.getTask(GetTaskRequest.fromJSON({ id: 'no-such-task' }));
  } catch (err) {
    return { error: String(err?.message ?? err), name: err?.constructor?.name ?? '' };
  }
  throw new Error('getTask of an unknown task succeeded');
});

report('done', true);
