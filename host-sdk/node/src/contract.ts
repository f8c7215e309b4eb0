// The host↔plugin contract (proto/agentplugin/v1) as TypeScript types: the
// hand-written side of the one seam between the .proto, loaded at run time
// by proto.ts, and host code. Field names are the proto's in lowerCamelCase
// (as @grpc/proto-loader decodes them), enums are their names, 64-bit
// integers are numbers, bytes are Buffers; google.protobuf.Struct and Value
// fields are plain JSON values (struct.ts converts at the seam).

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

/** A JSON value (what Struct and Value fields carry). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object (google.protobuf.Struct). */
export type JsonObject = { [key: string]: JsonValue };

/** One piece of message content: exactly one of text, raw, url, data. */
export interface Part {
  text?: string;
  raw?: Buffer;
  url?: string;
  data?: JsonValue;
  mediaType?: string;
  filename?: string;
  metadata?: JsonObject;
}

export type TrustTier = "TRUST_TIER_UNSPECIFIED" | "TRUST_TIER_PUBLIC" | "TRUST_TIER_TRUSTED" | "TRUST_TIER_LOCAL";
export type Capability = "CAPABILITY_UNSPECIFIED" | "CAPABILITY_PLATFORM" | "CAPABILITY_TOOLSET";
export type SendKind =
  | "SEND_KIND_UNSPECIFIED"
  | "SEND_KIND_PROGRESS"
  | "SEND_KIND_FINAL"
  | "SEND_KIND_INPUT_REQUIRED"
  | "SEND_KIND_ARTIFACT"
  | "SEND_KIND_DIRECT_REPLY"
  | "SEND_KIND_AUTH_REQUIRED";
export type Outcome = "OUTCOME_UNSPECIFIED" | "OUTCOME_SUCCESS" | "OUTCOME_FAILURE" | "OUTCOME_CANCELLED" | "OUTCOME_REJECTED";

export interface Sender {
  id: string;
  displayName?: string;
}

export interface TraceContext {
  traceparent?: string;
  tracestate?: string;
}

/** A tool in OpenAI function-calling style. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema (object) of the arguments, as JSON text. */
  parametersJsonSchema: string;
  toolset?: string;
  tags?: string[];
}

export interface DescribeResponse {
  name: string;
  version: string;
  protocolMinor: number;
  capabilities: Capability[];
  description: string;
  envPrefixes: string[];
}

/** What a host tells a plugin about itself in Configure. */
export interface HostInfo {
  name?: string;
  version?: string;
  protocolMinor?: number;
  /** Optional HostService RPCs the host implements ("Complete", "RecordDelegation"). */
  optionalRpcs?: string[];
  /** The host cannot stop a turn it is running (contract 1.3). */
  cancelTurnUnsupported?: boolean;
  /** The agents the host runs, the first its default (contract 1.4); none: one default agent. */
  agents?: HostAgent[];
}

/** One agent a host runs (contract 1.4). */
export interface HostAgent {
  id: string;
  name?: string;
  description?: string;
  skills?: AgentSkill[];
}

/** A skill of a HostAgent, as an A2A agent card lists it. */
export interface AgentSkill {
  id: string;
  name?: string;
  description?: string;
  tags?: string[];
  examples?: string[];
}

export interface ConfigureResponse {
  warnings: string[];
}

export interface DrainResponse {
  abandoned: number;
}

export interface ConnectResponse {
  endpoints: string[];
}

export interface Artifact {
  artifactId?: string;
  name?: string;
  description?: string;
  parts?: Part[];
  append?: boolean;
  lastChunk?: boolean;
  metadata?: JsonObject;
}

/** Agent output for one conversation and task. */
export interface SendRequest {
  platform: string;
  chatId: string;
  taskId?: string;
  kind: SendKind;
  text?: string;
  parts?: Part[];
  artifact?: Artifact;
  metadata?: JsonObject;
  /** The turn's last output (contract 1.1): no ProcessingComplete follows. */
  endsTurn?: boolean;
  /** The agent whose output this is (contract 1.4): the turn's HandleMessageRequest.agentId. */
  agentId?: string;
}

export interface SendResponse {
  messageId: string;
}

export interface ProcessingCompleteRequest {
  platform: string;
  chatId: string;
  taskId?: string;
  outcome: Outcome;
  error?: string;
  /** The agent whose turn ends (contract 1.4). */
  agentId?: string;
}

export interface CallToolRequest {
  name: string;
  /** Arguments as a JSON object, as JSON text. */
  argumentsJson: string;
  callId?: string;
  platform?: string;
  chatId?: string;
  trace?: TraceContext;
  /** The agent whose turn calls the tool (contract 1.4; "" without agents). */
  agentId?: string;
}

export interface ToolProgress {
  message: string;
  /** Completed fraction in [0,1], or negative when unknown. */
  fraction: number;
}

export interface ToolResult {
  content: string;
  isError: boolean;
}

/** One inbound message the plugin injects into the host's live session. */
export interface HandleMessageRequest {
  platform: string;
  chatId: string;
  sender?: Sender;
  trustTier: TrustTier;
  taskId: string;
  text: string;
  parts: Part[];
  messageId: string;
  metadata?: JsonObject;
  unattended: boolean;
  trace?: TraceContext;
  referenceTaskIds: string[];
  continuation: boolean;
  /** The agent the message is for (contract 1.4; "" for a host that lists none). */
  agentId?: string;
}

export interface HandleMessageResponse {
  turnId?: string;
}

export interface CancelTurnRequest {
  platform: string;
  chatId: string;
  taskId: string;
  reason: string;
  /** The agent whose turn to stop (contract 1.4). */
  agentId?: string;
}

export interface CancelTurnResponse {
  cancelled: boolean;
}

export interface CompleteRequest {
  system: string;
  prompt: string;
  maxTokens: number;
}

export interface CompleteResponse {
  text: string;
}

export interface RecordDelegationRequest {
  platform: string;
  chatId: string;
  peer: string;
  remoteTaskId: string;
  remoteContextId: string;
  chainId: string;
  requestSummary: string;
  resultSummary: string;
  state: string;
}

/** Names under which one plugin binary serves its services. */
export const PLUGIN_NAMES = { lifecycle: "lifecycle", platform: "platform", toolset: "toolset" } as const;
