// The host↔plugin contract (proto/agentplugin/v1) for TypeScript: its
// constants, and its message and enum types, generated from the .proto that
// proto.ts loads at run time (src/gen). Field names are the proto's in
// lowerCamelCase (as @grpc/proto-loader decodes them), enums are their
// names, 64-bit integers are numbers, bytes are Buffers; google.protobuf.Struct
// and Value fields are plain JSON values (struct.ts converts at the seam).

/** The go-plugin application protocol version: the contract's major. */
export const PROTOCOL_MAJOR = 1;
/**
 * The contract minor this library implements; it equals the
 * "protocol-version:" header of agentplugin.proto (a test keeps them equal).
 */
export const PROTOCOL_MINOR = 4;

/** The go-plugin handshake every agentplugin binary expects. */
export const HANDSHAKE = {
  protocolVersion: PROTOCOL_MAJOR,
  magicCookieKey: "AGENTPLUGIN_MAGIC_COOKIE",
  magicCookieValue: "7f3c2a9e-agentplugin-v1-b41d5e08",
} as const;

/** Environment variable carrying the log level a host wants. */
export const ENV_LOG_LEVEL = "AGENTPLUGIN_LOG_LEVEL";

// The contract's messages and enums: generated from agentplugin.proto by
// cmd/protoc-gen-a2a-ts (`make proto`), never written here. M is a message
// as this library hands it to host code (as @grpc/proto-loader decodes it,
// Struct and Value fields as plain JSON); MInit is what host code may give
// where the library sends one (every field optional).
export type * from "./gen/agentplugin/v1/agentplugin.js";

/** Names under which one plugin binary serves its services. */
export const PLUGIN_NAMES = { lifecycle: "lifecycle", platform: "platform", toolset: "toolset" } as const;
