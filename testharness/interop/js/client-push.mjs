// client-push.mjs — manages push-notification configs of an A2A agent with
// the official JS SDK client (@a2a-js/sdk), a client we did not write, and
// reports what it saw. The Go end-to-end tests (testharness/e2e/durability)
// run it against the plugin binary and check every step.
//
// Usage: node client-push.mjs <agent base URL> <webhook base URL>
//        A2A_TOKEN=… adds "Authorization: Bearer …" to every request.
//
// The agent is expected to answer "report …" by completing a task. Webhook
// URLs are <webhook base URL>/<name>; each config sets the Bearer
// credentials "cred-<name>" and the token "tok-<name>", so the receiver can
// check what each notification carries.
//
// Output: one JSON object per line and step, {"step": …, "ok": true|false,
// …details} or {"step": …, "ok": false, "error": "…"}; then {"step":"done"}.
import {
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { authFetch as makeAuthFetch, makeStep, report, request, stateOf } from './common.mjs';

const [base, hooks] = process.argv.slice(2);
if (!base || !hooks) {
  process.stderr.write('usage: node client-push.mjs <agent base URL> <webhook base URL>\n');
  process.exit(2);
}
const token = process.env.A2A_TOKEN ?? '';

// authFetch adds the bearer token, when one is given, to every request.
const authFetch = makeAuthFetch(token);

// step runs one check, reporting an exception as a failed step with the
// error's class.
const step = makeStep((err) => ({ error: String(err?.message ?? err), name: err?.constructor?.name ?? '' }));

// expectError runs fn, which must throw; it reports the error.
async function expectError(name, fn) {
  try {
    const res = await fn();
    report(name, false, { error: `succeeded: ${JSON.stringify(res)}` });
  } catch (err) {
    report(name, true, { error: String(err?.message ?? err), name: err?.constructor?.name ?? '' });
  }
}

// config builds a push config (the SDK's own type) for webhook <name>.
const config = (taskId, id, name) =>
  TaskPushNotificationConfig.fromJSON({
    taskId,
    ...(id ? { id } : {}),
    url: `${hooks}/${name}`,
    token: `tok-${name}`,
    authentication: { scheme: 'Bearer', credentials: `cred-${name}` },
  });
const configJSON = (c) => TaskPushNotificationConfig.toJSON(c);
const idsOf = (list) => (list.configs ?? list).map((c) => c.id);


const resolver = new DefaultAgentCardResolver({ fetchImpl: authFetch });
let card;
await step('card', async () => {
  card = await resolver.resolve(base);
  return {
    pushNotifications: card.capabilities?.pushNotifications === true,
    interfaces: (card.supportedInterfaces ?? []).map((i) => `${i.protocolBinding} ${i.protocolVersion}`),
  };
});
if (!card) {
  report('done', false);
  process.exit(1);
}

// clientFor builds a client over the card's interfaces of one protocol
// version ("1.0", or "0.3" through the SDK's legacy transport).
async function clientFor(version) {
  const legacy = version !== '1.0';
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch, ...(legacy ? { legacyCompat: { enabled: true } } : {}) })],
      cardResolver: resolver,
    }),
  );
  const interfaces = (card.supportedInterfaces ?? []).filter((i) => i.protocolVersion.startsWith(version));
  if (interfaces.length === 0) throw new Error(`the card has no ${version} interface`);
  return factory.createFromAgentCard({ ...card, supportedInterfaces: interfaces });
}

const client = await clientFor('1.0');

let taskId;
await step('send', async () => {
  const t = await client.sendMessage(request('report from js'));
  taskId = t.id;
  return { taskId: t.id, state: stateOf(t), protocolVersion: client.protocolVersion };
});

await step('create', async () => {
  const c = await client.createTaskPushNotificationConfig(config(taskId, 'js-cfg-1', 'js-1'));
  return { config: configJSON(c) };
});

await step('create-generated-id', async () => {
  const c = await client.createTaskPushNotificationConfig(config(taskId, '', 'js-2'));
  return { config: configJSON(c) };
});

await step('get', async () => {
  const c = await client.getTaskPushNotificationConfig(
    GetTaskPushNotificationConfigRequest.fromJSON({ taskId, id: 'js-cfg-1' }),
  );
  return { config: configJSON(c) };
});

await step('list', async () => {
  const l = await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId }));
  return { ids: idsOf(l), configs: l.configs.map(configJSON) };
});

await step('delete', async () => {
  await client.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId, id: 'js-cfg-1' }));
  return {};
});

await step('delete-again', async () => {
  await client.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId, id: 'js-cfg-1' }));
  return {};
});

await expectError('get-deleted', () =>
  client.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON({ taskId, id: 'js-cfg-1' })),
);

await step('list-after-delete', async () => {
  const l = await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId }));
  return { ids: idsOf(l) };
});

await step('inline', async () => {
  const t = await client.sendMessage(
    request('report inline from js', {
      taskPushNotificationConfig: {
        id: 'js-inline',
        url: `${hooks}/js-inline`,
        token: 'tok-js-inline',
        authentication: { scheme: 'Bearer', credentials: 'cred-js-inline' },
      },
    }),
  );
  const l = await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: t.id }));
  return { taskId: t.id, state: stateOf(t), ids: idsOf(l), configs: l.configs.map(configJSON) };
});

await step('legacy', async () => {
  const old = await clientFor('0.3');
  const created = await old.createTaskPushNotificationConfig(config(taskId, 'js-03', 'js-03'));
  const got = await old.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON({ taskId, id: 'js-03' }));
  const list = await old.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId }));
  await old.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId, id: 'js-03' }));
  const after = await old.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId }));
  return {
    protocolVersion: old.protocolVersion,
    created: configJSON(created),
    got: configJSON(got),
    ids: idsOf(list),
    idsAfterDelete: idsOf(after),
  };
});

report('done', true);
