// echo-server.mjs — an A2A v1.0 JSON-RPC agent built only on the official
// JS SDK (@a2a-js/sdk) and express, used by the Go interop tests as a peer
// we did not write.
//
// Usage: node echo-server.mjs [port]   (or PORT=…; 0 or unset = any free port)
//        NAME=… sets the agent name (default "JS Echo Agent").
//        BINDING=grpc serves the agent over gRPC only (the SDK's
//        lf.a2a.v1.A2AService on a free port of its own, with
//        @grpc/grpc-js); the card, still over HTTP, then declares that one
//        GRPC interface as "127.0.0.1:<port>".
// Prints "LISTENING <base url>" on stdout once it accepts connections.
//
// Behaviour, by the text of the incoming message:
//   ask …    asks a question (TASK_STATE_INPUT_REQUIRED); the next message on
//            the same task completes it with "echo: <answer>".
//   slow …   streams a few progress status updates (WORKING, ~150 ms apart)
//            before completing; cancel stops it (TASK_STATE_CANCELED).
//   hold …   works (TASK_STATE_WORKING) until CancelTask stops it
//            (TASK_STATE_CANCELED), or completes after 10 minutes.
//   fail …   fails the task (TASK_STATE_FAILED).
//   anything else: completes at once with an artifact "echo: <text>"; file
//            and data parts are described in the answer.
import express from 'express';
import { AgentCard, Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import * as grpc from '@grpc/grpc-js';
import { A2AService, grpcService, UserBuilder as GrpcUserBuilder } from '@a2a-js/sdk/server/grpc';

const portArg = process.argv[2] ?? process.env.PORT ?? '0';
const name = process.env.NAME ?? 'JS Echo Agent';
const host = '127.0.0.1';

const canceled = new Set();
let artifactSeq = 0;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function statusEvent(taskId, contextId, state, text) {
  const status = { state, timestamp: new Date().toISOString() };
  if (text !== undefined) {
    status.message = {
      messageId: `status-${taskId}-${Date.now()}-${Math.random().toString(16).slice(2)}`,
      role: 'ROLE_AGENT',
      taskId,
      contextId,
      parts: [{ text }],
    };
  }
  return AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({ taskId, contextId, status }));
}

function artifactEvent(taskId, contextId, text) {
  artifactSeq += 1;
  return AgentEvent.artifactUpdate(
    TaskArtifactUpdateEvent.fromJSON({
      taskId,
      contextId,
      artifact: { artifactId: `answer-${artifactSeq}`, name: 'answer', parts: [{ text }] },
      lastChunk: true,
    }),
  );
}

// describe flattens a message (in JSON form) to the text the echo answers.
function describe(msg) {
  const out = [];
  for (const p of msg.parts ?? []) {
    if (typeof p.text === 'string') out.push(p.text);
    else if (p.raw !== undefined) {
      const n = Buffer.from(p.raw, 'base64').length;
      out.push(`[file ${p.filename || '(unnamed)'} ${p.mediaType || ''} ${n} bytes]`);
    } else if (p.url !== undefined) out.push(`[file url ${p.url} ${p.mediaType || ''}]`);
    else if (p.data !== undefined) out.push(`[data ${JSON.stringify(p.data)}]`);
  }
  return out.join(' ');
}

const executor = {
  async execute(ctx, bus) {
    const msg = Message.toJSON(ctx.userMessage);
    const text = describe(msg).trim();
    const { taskId, contextId } = ctx;
    const lower = text.toLowerCase();

    if (ctx.task) {
      // A follow-up on an existing task (answer to our question): finish it.
      bus.publish(AgentEvent.task(ctx.task));
      bus.publish(artifactEvent(taskId, contextId, `echo: ${text}`));
      bus.publish(statusEvent(taskId, contextId, 'TASK_STATE_COMPLETED', `echo: ${text}`));
      bus.finished();
      return;
    }

    bus.publish(
      AgentEvent.task(
        Task.fromJSON({
          id: taskId,
          contextId,
          status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date().toISOString() },
          history: [msg],
        }),
      ),
    );

    if (lower.startsWith('ask')) {
      bus.publish(statusEvent(taskId, contextId, 'TASK_STATE_INPUT_REQUIRED', 'What is your favourite colour?'));
      bus.finished();
      return;
    }
    if (lower.startsWith('fail')) {
      bus.publish(statusEvent(taskId, contextId, 'TASK_STATE_FAILED', 'failed as asked'));
      bus.finished();
      return;
    }
    if (lower.startsWith('hold')) {
      bus.publish(statusEvent(taskId, contextId, 'TASK_STATE_WORKING', 'holding until canceled'));
      for (const end = Date.now() + 10 * 60 * 1000; Date.now() < end; ) {
        if (canceled.has(taskId)) {
          bus.publish(statusEvent(taskId, contextId, 'TASK_STATE_CANCELED', 'canceled'));
          bus.finished();
          return;
        }
        await sleep(50);
      }
    }
    if (lower.startsWith('slow')) {
      const steps = 3;
      for (let i = 1; i <= steps; i++) {
        if (canceled.has(taskId)) {
          bus.publish(statusEvent(taskId, contextId, 'TASK_STATE_CANCELED', 'canceled'));
          bus.finished();
          return;
        }
        bus.publish(statusEvent(taskId, contextId, 'TASK_STATE_WORKING', `progress ${i}/${steps}`));
        await sleep(150);
      }
      if (canceled.has(taskId)) {
        bus.publish(statusEvent(taskId, contextId, 'TASK_STATE_CANCELED', 'canceled'));
        bus.finished();
        return;
      }
    }
    bus.publish(artifactEvent(taskId, contextId, `echo: ${text}`));
    bus.publish(statusEvent(taskId, contextId, 'TASK_STATE_COMPLETED'));
    bus.finished();
  },

  async cancelTask(taskId, bus) {
    canceled.add(taskId);
  },
};

// startGRPC serves handler over gRPC on a free loopback port and returns
// that port.
const grpcServer = new grpc.Server();
const startGRPC = () =>
  new Promise((resolve, reject) =>
    grpcServer.bindAsync(`${host}:0`, grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
const grpcPort = process.env.BINDING === 'grpc' ? await startGRPC() : 0;

const app = express();
const server = app.listen(Number(portArg), host, () => {
  const base = `http://${host}:${server.address().port}`;
  const interfaces = grpcPort
    ? [{ url: `${host}:${grpcPort}`, protocolBinding: 'GRPC', protocolVersion: '1.0' }]
    : [{ url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }];
  const card = AgentCard.fromJSON({
    name,
    description: 'Echoes messages; "ask" asks a question, "slow" streams progress, "hold" works until canceled, "fail" fails.',
    version: '1.0.0',
    supportedInterfaces: interfaces,
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text/plain', 'application/json', 'application/octet-stream'],
    defaultOutputModes: ['text/plain'],
    skills: [
      { id: 'echo', name: 'Echo', description: 'Repeats what it is told', tags: ['echo', 'test', 'repeat'] },
    ],
  });
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler, cache: { maxAge: 60 } }));
  if (grpcPort) {
    grpcServer.addService(A2AService, grpcService({ requestHandler: handler, userBuilder: GrpcUserBuilder.noAuthentication }));
  } else {
    app.use('/a2a/jsonrpc', express.json({ limit: '20mb' }), jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  }
  process.stdout.write(`LISTENING ${base}\n`);
});

const stop = () => {
  grpcServer.forceShutdown();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// Exit when the Go test that started us goes away (stdin closes).
process.stdin.on('end', stop);
process.stdin.resume();
