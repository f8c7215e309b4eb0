// client-hermes.mjs — drives an agent hosted by Hermes through the a2a-plugin
// Hermes plugin (the stand-in gateway of host-sdk/hermes/tests with its
// scripted model) with the official JS SDK client (@a2a-js/sdk), and reports
// what it saw.
//
// Usage: node client-hermes.mjs <agent base URL>
//        A2A_TOKEN=… adds "Authorization: Bearer …" to every request.
//
// The scripted model echoes ("echo: <text>"), remembers a word across turns
// of one context, asks "[INPUT_REQUIRED] For how many people?" when asked to
// book a table, and works until interrupted on "slow …".
//
// Output: one JSON object per line and step, as client-check.mjs.
import { randomUUID } from 'node:crypto';
import { CancelTaskRequest, GetTaskRequest, SendMessageRequest } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { authFetch as makeAuthFetch, isTask, makeStep, report, stateOf, textOf } from './common.mjs';

const base = process.argv[2];
if (!base) {
  process.stderr.write('usage: node client-hermes.mjs <agent base URL>\n');
  process.exit(2);
}
const authFetch = makeAuthFetch(process.env.A2A_TOKEN ?? '');
const step = makeStep();

// send builds a request with one text part, in a context and task when given.
const send = (text, { contextId, taskId, configuration } = {}) =>
  SendMessageRequest.fromJSON({
    message: {
      messageId: randomUUID(),
      role: 'ROLE_USER',
      parts: [{ text }],
      ...(contextId ? { contextId } : {}),
      ...(taskId ? { taskId } : {}),
    },
    ...(configuration ? { configuration } : {}),
  });

// A completed task's answer is its "answer" artifact; a question is the
// status message.
const summary = (t) => {
  const answers = (t.artifacts ?? []).filter((a) => a.name === 'answer');
  return {
    taskId: t.id,
    contextId: t.contextId,
    state: stateOf(t),
    answer: answers.length ? textOf(answers[answers.length - 1].parts) : textOf(t.status?.message?.parts),
  };
};

const resolver = new DefaultAgentCardResolver({ fetchImpl: authFetch });
let card;
await step('card', async () => {
  card = await resolver.resolve(base);
  return { name: card.name, streaming: card.capabilities?.streaming === true, skills: (card.skills ?? []).map((s) => s.id) };
});
if (!card) {
  report('done', false);
  process.exit(1);
}
const client = await new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
    cardResolver: resolver,
  }),
).createFromAgentCard(card);

const task = async (req) => {
  const res = await client.sendMessage(req);
  if (!isTask(res)) throw new Error(`expected a task, got ${JSON.stringify(res)}`);
  return res;
};

let first;
await step('send', async () => {
  first = await task(send('hello from js'));
  return summary(first);
});

await step('history', async () => {
  const a = await task(send('remember the word heron'));
  const b = await task(send('what word did I say?', { contextId: a.contextId }));
  return { ...summary(b), first: summary(a) };
});

await step('question', async () => {
  const q = await task(send('book a table for friday'));
  const a = await task(send('2', { contextId: q.contextId, taskId: q.id }));
  return { ...summary(a), question: summary(q) };
});

await step('stream', async () => {
  const events = [];
  let answer = '';
  for await (const ev of client.sendMessageStream(send('hello stream'))) {
    const p = ev.payload;
    if (p.$case === 'statusUpdate') {
      events.push(`statusUpdate:${stateOf(p.value)}`);
    } else if (p.$case === 'artifactUpdate') {
      events.push('artifactUpdate');
      answer += textOf(p.value.artifact?.parts);
    } else if (p.$case === 'task') {
      events.push(`task:${stateOf(p.value)}`);
    } else {
      events.push(p.$case);
    }
  }
  return { events, answer };
});

await step('get', async () => summary(await client.getTask(GetTaskRequest.fromJSON({ id: first.id }))));

await step('cancel', async () => {
  const t = await task(send('slow from js', { configuration: { returnImmediately: true } }));
  const c = await client.cancelTask(CancelTaskRequest.fromJSON({ id: t.id }));
  return { ...summary(c), before: stateOf(t) };
});

report('done', true);
