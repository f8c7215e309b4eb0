// @a2a-plugin/host-sdk: run agentplugin plugins (hashicorp go-plugin over
// gRPC, proto/agentplugin/v1) from a Node/TypeScript agent host.
export * from "./contract.js";
export { Manager, MANAGER_DEFAULTS, discover, type ManagerOptions, type PluginEvent, type RestartPolicy } from "./manager.js";
export { Plugin, type PluginState } from "./plugin.js";
export type { Platform, Toolset } from "./handles.js";
export { HostServer, optionalRpcs, DEFAULT_HEARTBEAT_MS, type HostHandler, type CallContext } from "./host.js";
export { CallError, Code, HandshakeError, PluginUnavailableError, UnimplementedError } from "./errors.js";
export { consoleLogger, nullLogger, readableLogLine, type Logger, type LogLevel } from "./log.js";
export { BASE_ENV_ALLOW, buildEnv } from "./env.js";
export { OWNER_FILE, makeOwnedDir, sweepDead } from "./tmpdirs.js";
export { parseHandshake, type HandshakeLine } from "./handshake.js";
export { CONTRACT_PROTO, MAX_MESSAGE_BYTES, type CallOpts } from "./proto.js";
