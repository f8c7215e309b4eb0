// A minimal Node host on @a2a-plugin/host-sdk: it runs one plugin and
// answers every inbound message with the sender's words, as the reference
// host's echo agent does (agenthost run --agent echo). Installed from the
// package it runs as is:
//
//   npm install ./a2a-plugin-host-sdk-X.Y.Z.tgz
//   node node_modules/@a2a-plugin/host-sdk/examples/echo-host.mjs --plugin ./a2a-plugin --port 41300
//
// It prints "serving at URL" for each endpoint once the plugin serves, and
// stops the plugin (Drain, then Shutdown) on SIGINT or SIGTERM.
import { parseArgs } from "node:util";
import { Manager, consoleLogger } from "@a2a-plugin/host-sdk";

const { values } = parseArgs({
  options: {
    plugin: { type: "string" },
    port: { type: "string", default: "0" },
    data: { type: "string" },
  },
});
if (!values.plugin) {
  console.error("usage: echo-host.mjs --plugin PATH/TO/a2a-plugin [--port N] [--data DIR]");
  process.exit(2);
}

/** The host's agent: the text parts of the original message, echoed. */
class EchoHost {
  platform = undefined;
  async handleMessage(req) {
    const words = req.parts.length ? req.parts.map((p) => p.text ?? "").join("\n") : req.text;
    const out = { platform: req.platform, chatId: req.chatId, taskId: req.taskId };
    setImmediate(() => {
      this.platform
        .send({ ...out, kind: "SEND_KIND_FINAL", text: words, endsTurn: true })
        .catch((err) => console.error("echo-host: send failed:", err));
    });
    return { turnId: "turn-" + req.taskId };
  }
  async cancelTurn() {
    return { cancelled: false };
  }
  async listTools() {
    return [];
  }
}

const host = new EchoHost();
const manager = new Manager({
  paths: [values.plugin],
  host,
  dataDir: values.data,
  logger: consoleLogger("warn"),
  config: { a2a: { port: Number(values.port), store: "memory" } },
});
await manager.start();
const a2a = manager.plugin("a2a");
host.platform = a2a.platform();
for (const url of a2a.endpoints) console.log(`serving at ${url}`);

const stop = async () => {
  await manager.close();
  process.exit(0);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
