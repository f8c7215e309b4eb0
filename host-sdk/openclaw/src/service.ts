// The plugin binary as a long-lived OpenClaw service: started with the
// gateway (api.registerService), supervised by the host library (restart,
// no orphans), stopped with Drain and Shutdown when the gateway stops.
import path from "node:path";
import { Manager, type Logger } from "@a2a-plugin/host-sdk";
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/core";
import { hostAgents } from "./agents.js";
import { BINARY, PLUGIN_ID } from "./ids.js";
import type { OpenClawHost } from "./turns.js";

/** The binary's plugin name (its Describe). */
const A2A = "a2a";

export class BinaryService {
  manager: Manager | undefined;

  constructor(private readonly api: OpenClawPluginApi, readonly host: OpenClawHost) {}

  /** Launches and configures the binary with plugins.entries.a2a-plugin.config as its section. */
  async start(): Promise<void> {
    const api = this.api;
    const stateDir = api.runtime.state.resolveStateDir(process.env);
    const logger: Logger = {
      debug: (m, f) => api.logger.debug?.(line(m, f)),
      info: (m, f) => api.logger.info(line(m, f)),
      warn: (m, f) => api.logger.warn(line(m, f)),
      error: (m, f) => api.logger.error(line(m, f)),
    };
    // Several OpenClaw agents: each is its own A2A agent (contract 1.4).
    const { agents, skipped } = hostAgents(api.config);
    for (const why of skipped) api.logger.warn(`a2a-plugin: ${why}`);
    const m = new Manager({
      paths: [BINARY],
      host: this.host,
      config: { [A2A]: api.pluginConfig ?? {} },
      dataDir: path.join(stateDir, PLUGIN_ID),
      logger,
      // OpenClaw cannot abort a dispatched run (contract 1.3).
      hostInfo: { name: "openclaw", version: api.runtime.version ?? "", cancelTurnUnsupported: true, agents },
      // A2A_* settings from the gateway's environment win over the config.
      envAllow: ["A2A_*"],
    });
    await m.start();
    const a2a = m.plugin(A2A);
    this.host.platform = a2a?.platform();
    this.manager = m;
    api.logger.info(`a2a-plugin: serving A2A at ${a2a?.endpoints.join(", ")}`);
  }

  async stop(): Promise<void> {
    const m = this.manager;
    this.manager = undefined;
    this.host.platform = undefined;
    await m?.close();
  }
}

function line(msg: string, fields?: Record<string, unknown>): string {
  const kv = fields ? Object.entries(fields).map(([k, v]) => ` ${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join("") : "";
  return `a2a-plugin: ${msg}${kv}`;
}
