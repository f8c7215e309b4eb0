// client-oauth.mjs — drives an OAuth-protected A2A v1.0 agent with the
// official JS SDK client (@a2a-js/sdk): it reads the agent's card, finds
// the OAuth 2.0 client-credentials flow there, gets an access token at
// its token URL (RFC 6749 §4.4: a form POST with HTTP Basic client
// authentication) and calls the agent through the SDK's
// AuthenticationHandler, which fetches a new token when the agent answers
// 401. The Go tests of internal/server run it against our server.
//
// Usage: OAUTH_CLIENT_ID=… OAUTH_CLIENT_SECRET=… OAUTH_AUDIENCE=… \
//        OAUTH_SCOPES="a2a:send a2a:get" node client-oauth.mjs <agent base URL>
//
// Output: one JSON object per line and step (see common.mjs).
import { GetTaskRequest, ListTasksRequest } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';
import { isTask, makeStep, report, request, stateOf, textOf } from './common.mjs';

const base = process.argv[2];
if (!base) {
  process.stderr.write('usage: node client-oauth.mjs <agent base URL>\n');
  process.exit(2);
}
const env = (name) => {
  const v = process.env[name];
  if (!v) {
    process.stderr.write(`client-oauth.mjs: ${name} is not set\n`);
    process.exit(2);
  }
  return v;
};
const clientId = env('OAUTH_CLIENT_ID');
const clientSecret = env('OAUTH_CLIENT_SECRET');
const audience = env('OAUTH_AUDIENCE');
const scopes = env('OAUTH_SCOPES');
const step = makeStep();

// The card is public. The agent learns its issuer's token endpoint by
// discovery, so a card read right after start may not have the flow yet.
const resolver = new DefaultAgentCardResolver();
let card;
let flow;
await step('card', async () => {
  for (let i = 0; i < 50 && !flow; i++) {
    card = await resolver.resolve(base);
    for (const s of Object.values(card.securitySchemes ?? {})) {
      // The SDK's typed form (a v1.0 card) …
      if (s.scheme?.$case === 'oauth2SecurityScheme' && s.scheme.value.flows?.flow?.$case === 'clientCredentials') {
        flow ??= s.scheme.value.flows.flow.value;
      }
      // … or the card's ProtoJSON, as the resolver hands over some cards.
      flow ??= s.oauth2SecurityScheme?.flows?.clientCredentials;
    }
    if (!flow) await new Promise((r) => setTimeout(r, 100));
  }
  if (!flow) throw new Error('the card declares no OAuth 2.0 client-credentials flow');
  return { securitySchemes: Object.keys(card.securitySchemes ?? {}) };
});
if (!flow) {
  report('done', false);
  process.exit(1);
}

// fetchToken runs the client-credentials grant at the card's token URL.
let fetches = 0;
const fetchToken = async () => {
  fetches++;
  const res = await fetch(flow.tokenUrl, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: 'Basic ' + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64'),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: scopes, audience }),
  });
  const body = await res.json();
  if (!res.ok || !body.access_token) throw new Error(`token endpoint: HTTP ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
};

let token;
await step('token', async () => {
  token = await fetchToken();
  return {};
});

// The SDK's authentication hook: the token on every request, and one
// new token when the agent refuses the current one.
const auth = {
  headers: async () => ({ Authorization: `Bearer ${token}` }),
  shouldRetryWithHeaders: async (_req, res) => {
    if (res.status !== 401) return undefined;
    token = await fetchToken();
    return { Authorization: `Bearer ${token}` };
  },
};
const clientWith = (fetchImpl) =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: resolver,
    }),
  ).createFromAgentCard(card);
const client = await clientWith(createAuthenticatingFetchWithRetry(fetch, auth));

let taskId;
await step('send', async () => {
  const res = await client.sendMessage(request('hello from js with oauth'));
  if (!isTask(res)) throw new Error(`expected a task, got ${JSON.stringify(res)}`);
  taskId = res.id;
  return { taskId: res.id, state: stateOf(res), answer: textOf(res.artifacts?.[0]?.parts) };
});

await step('get', async () => {
  const t = await client.getTask(GetTaskRequest.fromJSON({ id: taskId }));
  if (t.id !== taskId) throw new Error(`got task ${t.id}`);
  return { taskId: t.id, state: stateOf(t) };
});

// A token the agent no longer accepts: the handler gets a new one on the
// 401 and the SDK retries.
await step('refresh-on-401', async () => {
  const before = fetches;
  token = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.';
  const t = await client.getTask(GetTaskRequest.fromJSON({ id: taskId }));
  if (t.id !== taskId) throw new Error(`got task ${t.id}`);
  return { count: fetches - before };
});

// The token carries no list scope: the agent refuses, saying which.
await step('list-refused', async () => {
  try {
    await client.listTasks(ListTasksRequest.fromJSON({}));
  } catch (err) {
    return { error: String(err?.message ?? err) };
  }
  throw new Error('ListTasks succeeded without its scope');
});

// Without a token the agent refuses.
await step('no-token-refused', async () => {
  const plain = await clientWith(fetch);
  try {
    await plain.sendMessage(request('no token'));
  } catch (err) {
    return { error: String(err?.message ?? err) };
  }
  throw new Error('a call without a token succeeded');
});

report('done', true);
