// server-bench.mjs — the official JS SDK (@a2a-js/sdk) as a benchmark peer:
// an A2A v1.0 JSON-RPC echo agent on express, doing the same echo work as
// the other servers cmd/a2a-bench measures (a new task per message: the
// submitted task, WORKING, one artifact with the text, COMPLETED).
// It is echo-server.mjs without the scripted behaviours ("ask", "slow",
// "fail"), so the benchmark measures the SDK, not our test script.
//
// Usage: node server-bench.mjs [port]   (or PORT=…; 0 or unset = any free port)
// Prints "LISTENING <base url>" on stdout once it accepts connections; the
// JSON-RPC endpoint is <base url>/a2a/jsonrpc. Exits on SIGTERM, SIGINT or
// when stdin closes (the benchmark that started it went away).
import express from 'express';
import { AgentCard, Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const portArg = process.argv[2] ?? process.env.PORT ?? '0';
const host = '127.0.0.1';

function status(taskId, contextId, state) {
  return AgentEvent.statusUpdate(
    TaskStatusUpdateEvent.fromJSON({ taskId, contextId, status: { state, timestamp: new Date().toISOString() } }),
  );
}

// The text parts of a message, joined: what the echo answers.
function textOf(msg) {
  const out = [];
  for (const p of msg.parts ?? []) if (typeof p.text === 'string') out.push(p.text);
  return out.join(' ');
}

const executor = {
  async execute(ctx, bus) {
    const msg = Message.toJSON(ctx.userMessage);
    const { taskId, contextId } = ctx;
    bus.publish(
      AgentEvent.task(
        ctx.task ??
          Task.fromJSON({
            id: taskId,
            contextId,
            status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date().toISOString() },
            history: [msg],
          }),
      ),
    );
    bus.publish(status(taskId, contextId, 'TASK_STATE_WORKING'));
    bus.publish(
      AgentEvent.artifactUpdate(
        TaskArtifactUpdateEvent.fromJSON({
          taskId,
          contextId,
          artifact: { artifactId: `${taskId}-answer`, name: 'answer', parts: [{ text: textOf(msg) }] },
          lastChunk: true,
        }),
      ),
    );
    bus.publish(status(taskId, contextId, 'TASK_STATE_COMPLETED'));
    bus.finished();
  },
  async cancelTask() {},
};

const app = express();
const server = app.listen(Number(portArg), host, () => {
  const base = `http://${host}:${server.address().port}`;
  const card = AgentCard.fromJSON({
    name: 'JS SDK Bench Echo',
    description: 'Echoes each message as a completed task (benchmark peer).',
    version: '1.0.0',
    supportedInterfaces: [{ url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Repeats what it is told', tags: ['echo'] }],
  });
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/a2a/jsonrpc', express.json({ limit: '4mb' }), jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  process.stdout.write(`LISTENING ${base}\n`);
});
// Load tools keep connections open between requests; do not cut them
// after Node's default 5 s of idleness in the middle of a benchmark.
server.keepAliveTimeout = 60_000;

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
