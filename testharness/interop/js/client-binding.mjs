// client-binding.mjs — drives an A2A v1.0 agent through its HTTP+JSON
// (REST) or its gRPC interface with the official JS SDK client
// (@a2a-js/sdk: RestTransport, or GrpcTransport on @grpc/grpc-js), a client
// we did not write, and reports what it saw. The Go tests of
// internal/server run it against our server.
//
// Usage: node client-binding.mjs <agent base URL> [rest|grpc]   (default rest)
//        A2A_TOKEN=… adds "Authorization: Bearer …" to every request (over
//        gRPC as the `authorization` metadata, through a call interceptor).
//        A2A_WEBHOOK_URL=… is the push config URL (default
//        https://client.example/cb; an agent with an SSRF guard that
//        resolves names needs one it accepts).
//
// Only the one transport factory is given to the client, so it must pick
// the card's HTTP+JSON (or GRPC) interface; every HTTP request path is
// recorded and reported in the last step, so the caller can check that
// none went to the JSON-RPC endpoint (over gRPC: that only the card was
// fetched over HTTP).
//
// The agent is expected to behave like the server tests' scripted agent:
// "progress …" streams progress and artifact chunks, "slow …" keeps working
// until canceled (or released by the caller after the "subscribed" line),
// "direct …" answers with a message, anything else is echoed as
// "echo: <text>".
//
// Output: one JSON object per line and step, {"step": …, "ok": true|false,
// …details} or {"step": …, "ok": false, "error": "…"}; then {"step":"done"}.
import {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { authFetch as makeAuthFetch, isTask, makeStep, report, request, stateOf, textOf } from './common.mjs';

const base = process.argv[2];
const binding = process.argv[3] ?? 'rest';
if (!base || !['rest', 'grpc'].includes(binding)) {
  process.stderr.write('usage: node client-binding.mjs <agent base URL> [rest|grpc]\n');
  process.exit(2);
}
const token = process.env.A2A_TOKEN ?? '';
const webhook = process.env.A2A_WEBHOOK_URL || 'https://client.example/cb';

// requests records "METHOD path" of every request the SDK makes.
const requests = [];

// authFetch adds the bearer token, when one is given, and records the
// request.
const authFetch = makeAuthFetch(token, (method, path) => requests.push(`${method} ${path}`));

const label = (ev) => {
  const p = ev.payload;
  if (!p) throw new Error('stream event without payload');
  return p.$case === 'task' || p.$case === 'statusUpdate' ? `${p.$case}:${stateOf(p.value)}` : p.$case;
};
// describe reports an error the SDK threw: its class name (the SDK maps
// google.rpc.Status errors, and gRPC statuses, to typed errors by
// ErrorInfo reason), the HTTP status or gRPC code, and the message.
const describe = (err) => ({
  error: String(err?.message ?? err),
  name: err?.name ?? '',
  statusCode: err?.statusCode ?? err?.cause?.code ?? 0,
  transport: err?.transport ?? '',
});

// step runs one check, reporting an exception as a failed step.
const step = makeStep(describe);

// expectError runs fn, which must throw, and reports what it threw.
async function expectError(name, fn) {
  await step(name, async () => {
    try {
      await fn();
    } catch (err) {
      return describe(err);
    }
    throw new Error(`${name} succeeded`);
  });
}

const resolver = new DefaultAgentCardResolver({ fetchImpl: authFetch });
let agentCard;
await step('card', async () => {
  const c = await resolver.resolve(base);
  agentCard = c;
  return {
    name: c.name,
    interfaces: (c.supportedInterfaces ?? []).map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`),
  };
});
if (!agentCard) {
  report('done', false);
  process.exit(1);
}

// Only the one transport: the client must choose the card's HTTP+JSON (or
// GRPC) interface although the JSON-RPC ones are listed first. The gRPC
// transport sends each call's service parameters as metadata; the token
// joins them there.
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
const factory = new ClientFactory({
  transports: [binding === 'grpc' ? new GrpcTransportFactory() : new RestTransportFactory({ fetchImpl: authFetch })],
  cardResolver: resolver,
  clientConfig: { interceptors: binding === 'grpc' ? [bearer] : [] },
});
const client = await factory.createFromAgentCard(agentCard);

let taskId;
await step('send', async () => {
  const res = await client.sendMessage(request(`hello from js ${binding}`));
  if (!isTask(res)) throw new Error(`expected a task, got ${JSON.stringify(res)}`);
  taskId = res.id;
  return {
    protocolVersion: client.protocolVersion,
    taskId: res.id,
    contextId: res.contextId,
    state: stateOf(res),
    answer: textOf(res.artifacts?.[0]?.parts),
  };
});

await step('direct', async () => {
  const res = await client.sendMessage(request(`direct js ${binding}`));
  if (isTask(res)) throw new Error(`expected a message, got a task ${res.id}`);
  return { answer: textOf(res.parts) };
});

await step('stream', async () => {
  const events = [];
  for await (const ev of client.sendMessageStream(request(`progress from js ${binding}`))) {
    events.push(label(ev));
  }
  return { events };
});

await step('get', async () => {
  const t = await client.getTask(GetTaskRequest.fromJSON({ id: taskId, historyLength: 1 }));
  return { taskId: t.id, state: stateOf(t), history: t.history?.length ?? 0 };
});

await step('list', async () => {
  const l = await client.listTasks(ListTasksRequest.fromJSON({ pageSize: 10, includeArtifacts: true }));
  return {
    count: l.tasks.length,
    totalSize: l.totalSize,
    nextPageToken: l.nextPageToken,
    artifacts: l.tasks.reduce((n, t) => n + (t.artifacts?.length ?? 0), 0),
  };
});

await step('push', async () => {
  const created = await client.createTaskPushNotificationConfig(
    TaskPushNotificationConfig.fromJSON({ taskId, id: 'js-cfg', url: webhook, token: 'js-token' }),
  );
  const got = await client.getTaskPushNotificationConfig(
    GetTaskPushNotificationConfigRequest.fromJSON({ taskId, id: 'js-cfg' }),
  );
  const listed = await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId }));
  await client.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId, id: 'js-cfg' }));
  const after = await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId }));
  return { created: created.id, token: got.token, listed: listed.configs.length, afterDelete: after.configs.length };
});

await step('cancel', async () => {
  const res = await client.sendMessage(request(`slow from js ${binding}`, { returnImmediately: true }));
  if (!isTask(res)) throw new Error(`expected a task, got ${JSON.stringify(res)}`);
  const t = await client.cancelTask(CancelTaskRequest.fromJSON({ id: res.id }));
  return { taskId: t.id, state: stateOf(t) };
});

await step('resubscribe', async () => {
  const res = await client.sendMessage(request(`slow resubscribe ${binding}`, { returnImmediately: true }));
  const events = [];
  for await (const ev of client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: res.id }))) {
    events.push(label(ev));
    if (events.length === 1) {
      // Let the Go side release the agent once we are subscribed.
      process.stdout.write(JSON.stringify({ step: 'subscribed', ok: true, taskId: res.id }) + '\n');
    }
  }
  return { taskId: res.id, events };
});

await expectError('unknown-task', () => client.getTask(GetTaskRequest.fromJSON({ id: 'no-such-task' })));
await expectError('not-cancelable', () => client.cancelTask(CancelTaskRequest.fromJSON({ id: taskId })));
await expectError('terminal-subscribe', async () => {
  for await (const ev of client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: taskId }))) {
    throw new Error(`unexpected event ${label(ev)}`);
  }
});
await expectError('invalid-params', () => client.listTasks(ListTasksRequest.fromJSON({ pageSize: 500 })));

report('done', true, { requests });
