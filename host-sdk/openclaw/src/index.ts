// The a2a-plugin OpenClaw plugin: a channel whose inbound messages are the
// A2A tasks of the a2a-plugin binary, dispatched into the live agent, and
// the binary's tools registered as agent tools. The binary (the one
// implementation of A2A) runs as a service of the gateway through the Node
// host library.
import { defineChannelPluginEntry } from "openclaw/plugin-sdk/core";
import { ChannelLink, createChannel } from "./channel.js";
import { CHANNEL_ID, PLUGIN_ID } from "./ids.js";
import { BinaryService } from "./service.js";
import { registerTools } from "./tools.js";
import { OpenClawHost } from "./turns.js";

// Shared by every registration in the gateway process: OpenClaw registers
// the plugin more than once (full runtime, tool discovery), may load the
// module anew for each, and runs a tool from another registration than the
// one whose service started the binary. So the live channel and the running
// service are kept on globalThis, under a key of this plugin.
interface Shared {
  link: ChannelLink;
  running?: BinaryService;
}
const KEY = Symbol.for("a2a-plugin.openclaw.shared");
const shared: Shared = ((globalThis as Record<symbol, Shared | undefined>)[KEY] ??= { link: new ChannelLink() });
const link = shared.link;

export default defineChannelPluginEntry({
  id: PLUGIN_ID,
  name: "A2A (a2a-plugin)",
  description: "A2A v1.0 for the live OpenClaw agent: streaming, push, tasks, honest cancel, and delegation tools.",
  plugin: createChannel(link),
  registerFull(api) {
    const host = new OpenClawHost(link, api.runtime, api.logger);
    const service = new BinaryService(api, host);
    registerTools(api, () => shared.running?.manager, () => shared.running?.host ?? host);
    if (api.registrationMode !== "full") return;
    api.registerService({
      id: PLUGIN_ID,
      start: async () => {
        await service.start();
        shared.running = service;
      },
      stop: async () => {
        if (shared.running === service) shared.running = undefined;
        await service.stop();
      },
    });
  },
});

export { CHANNEL_ID, PLUGIN_ID };
