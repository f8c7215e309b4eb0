// The part of OpenClaw's plugin SDK (npm openclaw, pinned in the Makefile)
// this plugin uses, declared from OpenClaw's own documentation
// (node_modules/openclaw/docs/plugins/*.md) so the package builds without the
// ~840 MB host installed; at run time OpenClaw resolves these imports to
// itself. Only the members used here are declared.

declare module "openclaw/plugin-sdk/core" {
  /** OpenClaw's configuration (openclaw.json), opaque here. */
  export type OpenClawConfig = Record<string, unknown> & { channels?: Record<string, unknown> };

  export interface PluginLogger {
    debug?(msg: string, meta?: Record<string, unknown>): void;
    info(msg: string, meta?: Record<string, unknown>): void;
    warn(msg: string, meta?: Record<string, unknown>): void;
    error(msg: string, meta?: Record<string, unknown>): void;
  }

  /** What a tool returns to the agent. */
  export interface ToolResultContent {
    content: { type: "text"; text: string }[];
    details?: unknown;
  }

  export interface AgentTool {
    name: string;
    description: string;
    /** JSON Schema of the arguments. */
    parameters: Record<string, unknown>;
    execute(toolCallId: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResultContent>;
  }

  /** The trusted context a tool factory gets for the current turn. */
  export interface ToolFactoryContext {
    sessionKey?: string;
    messageChannel?: string;
    nativeChannelId?: string;
    requesterSenderId?: string;
    [key: string]: unknown;
  }

  export interface PluginService {
    id: string;
    start(ctx?: unknown): Promise<void> | void;
    stop?(ctx?: unknown): Promise<void> | void;
  }

  export interface PluginRuntime {
    version?: string;
    channel: ChannelRuntime;
    state: { resolveStateDir(env?: NodeJS.ProcessEnv): string };
    llm?: {
      complete(params: {
        messages: { role: "user"; content: string }[];
        systemPrompt?: string;
        maxTokens?: number;
        purpose?: string;
      }): Promise<{ text?: string; [key: string]: unknown }>;
    };
  }

  export interface OpenClawPluginApi {
    id: string;
    config: OpenClawConfig;
    pluginConfig?: Record<string, unknown>;
    registrationMode: string;
    logger: PluginLogger;
    runtime: PluginRuntime;
    registerTool(tool: AgentTool | ((ctx: ToolFactoryContext) => AgentTool | null), opts?: { name?: string; optional?: boolean }): void;
    registerService(service: PluginService): void;
  }

  /** A reply payload the agent produced. */
  export interface ReplyPayload {
    text?: string;
    mediaUrl?: string;
    mediaUrls?: string[];
    [key: string]: unknown;
  }

  export interface DispatchResult {
    admission: { kind: string; [key: string]: unknown };
    dispatched: boolean;
    [key: string]: unknown;
  }

  export interface ChannelRuntime {
    inbound: {
      buildContext(params: Record<string, unknown>): unknown;
      dispatch(params: {
        cfg: OpenClawConfig;
        channel: string;
        accountId: string;
        route: { agentId: string; dmScope?: string; sessionKey: string };
        ctxPayload: unknown;
        delivery: {
          deliver(payload: ReplyPayload, info: { kind: string; [key: string]: unknown }): Promise<void>;
          onError(error: unknown): void;
        };
        replyOptions?: Record<string, unknown>;
        replyPipeline?: Record<string, unknown>;
      }): Promise<DispatchResult>;
    };
  }

  /** What a channel's gateway.startAccount gets. */
  export interface ChannelGatewayContext<Account = unknown> {
    cfg: OpenClawConfig;
    accountId: string;
    account: Account;
    abortSignal: AbortSignal;
    channelRuntime?: ChannelRuntime;
    setStatus(status: Record<string, unknown>): void;
  }

  export type ChannelPlugin = Record<string, unknown>;

  export function createChatChannelPlugin<Account>(params: {
    base: {
      id: string;
      meta: Record<string, unknown>;
      capabilities: { chatTypes: string[] };
      config: {
        listAccountIds(cfg: OpenClawConfig): string[];
        resolveAccount(cfg: OpenClawConfig, accountId?: string | null): Account;
        inspectAccount?(cfg: OpenClawConfig, accountId?: string | null): Record<string, unknown>;
        isConfigured?(account: Account): boolean;
      };
      gateway?: { startAccount(ctx: ChannelGatewayContext<Account>): Promise<void> };
      [key: string]: unknown;
    };
    [key: string]: unknown;
  }): ChannelPlugin;

  export function defineChannelPluginEntry(params: {
    id: string;
    name: string;
    description: string;
    plugin: ChannelPlugin;
    registerFull?(api: OpenClawPluginApi): void;
  }): unknown;
}

declare module "openclaw/plugin-sdk/channel-inbound" {
  import type { OpenClawConfig } from "openclaw/plugin-sdk/core";
  export function resolveChannelInboundRouteEnvelope(params: {
    cfg: OpenClawConfig;
    channel: string;
    accountId: string;
    peer: { kind: "direct"; id: string };
    parentPeer?: { kind: "direct"; id: string };
    dmScope?: string;
  }): {
    route: { agentId: string; dmScope: string; accountId?: string; sessionKey: string };
    buildEnvelope(params: { channel: string; from: string; timestamp: number; body: string }): string;
  };
}

declare module "openclaw/plugin-sdk/routing" {
  /** The session key of a conversation with agentId (plugins/sdk-subpaths.md, plugin-sdk/routing). */
  export function buildAgentSessionKey(params: {
    agentId: string;
    channel: string;
    accountId?: string;
    peer?: { kind: "direct"; id: string };
    dmScope?: string;
  }): string;
}

declare module "openclaw/plugin-sdk/channel-lifecycle" {
  export function waitUntilAbort(signal: AbortSignal): Promise<void>;
}

declare module "openclaw/plugin-sdk/reply-payload" {
  import type { ReplyPayload } from "openclaw/plugin-sdk/core";
  /** Whether a final payload is the answer (not reasoning, commentary or a status notice). */
  export function isReplyPayloadTerminalContent(payload: ReplyPayload): boolean;
}
