// client-mcp.mjs — sends tasks with the official JS SDK client (@a2a-js/sdk)
// to an agent served by the MCP face with inbound on (cmd/a2a-mcp
// --inbound), whose answers the test gives through a2a_reply when the
// channel notification arrives; reports what it saw.
//
// Usage: node client-mcp.mjs <agent base URL>
//
// Steps: "blocking" (sendMessage "hello from js" and its answer) and
// "streaming" (sendMessageStream "stream from js": the events it saw and
// the text of the answer). Output: one JSON object per line and step, as
// client-check.mjs.
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { authFetch as makeAuthFetch, isTask, makeStep, report, request, stateOf, textOf } from './common.mjs';

const base = process.argv[2];
if (!base) {
  process.stderr.write('usage: node client-mcp.mjs <agent base URL>\n');
  process.exit(2);
}
const fetchImpl = makeAuthFetch('');
const step = makeStep();
const resolver = new DefaultAgentCardResolver({ fetchImpl });
const card = await resolver.resolve(base);
const client = await new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: resolver,
  }),
).createFromAgentCard(card);

// answerOf is a task's text: its artifacts, then its status message.
const answerOf = (t) =>
  (t.artifacts ?? []).map((a) => textOf(a.parts)).join('') + textOf(t.status?.message?.parts);

await step('blocking', async () => {
  const res = await client.sendMessage(request('hello from js'));
  if (!isTask(res)) throw new Error(`expected a task, got ${JSON.stringify(res)}`);
  return { taskId: res.id, state: stateOf(res), answer: answerOf(res) };
});

await step('streaming', async () => {
  const events = [];
  let text = '';
  for await (const ev of client.sendMessageStream(request('stream from js'))) {
    const p = ev.payload;
    if (!p) throw new Error('stream event without payload');
    let label = p.$case;
    if (p.$case === 'task') label += ':' + stateOf(p.value);
    if (p.$case === 'statusUpdate') {
      label += ':' + stateOf(p.value);
      text += textOf(p.value.status?.message?.parts);
    }
    if (p.$case === 'artifactUpdate') text += textOf(p.value.artifact?.parts);
    events.push(label);
  }
  return { events, answer: text };
});
report('done', true);
