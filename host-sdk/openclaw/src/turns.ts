// The host side of the contract for OpenClaw: every HandleMessage the
// binary sends (an A2A task's turn) is dispatched into the live OpenClaw
// agent through the channel, one OpenClaw conversation per A2A context
// (chat_id); the agent's replies go back as Send (progress while it works,
// the final answer with ends_turn), and a turn that yields no answer ends
// with ProcessingComplete. OpenClaw has no abort for a dispatched run, so
// CancelTurn never stops one (the host declares cancel_turn_unsupported and
// the binary refuses such cancels on the wire).
import {
  CallError, Code, type CallContext, type CancelTurnRequest, type CancelTurnResponse, type CompleteRequest,
  type CompleteResponse, type HandleMessageRequest, type HandleMessageResponse, type PartInit, type Platform,
  type ToolDefinition,
} from "@a2a-plugin/host-sdk";
import type { PluginLogger, PluginRuntime, ReplyPayload } from "openclaw/plugin-sdk/core";
import { resolveChannelInboundRouteEnvelope } from "openclaw/plugin-sdk/channel-inbound";
import { buildAgentSessionKey } from "openclaw/plugin-sdk/routing";
import { isReplyPayloadTerminalContent } from "openclaw/plugin-sdk/reply-payload";
import type { ChannelLink, LiveChannel } from "./channel.js";
import { CHANNEL_ID } from "./ids.js";

/**
 * How long a turn arriving while the gateway starts waits for the binary's
 * Platform handle and for OpenClaw to start the channel account.
 */
const STARTUP_WAIT_MS = 30_000;

export class OpenClawHost {
  /** Set once the binary is up: where the turns' output goes. */
  platform: Platform | undefined;
  /** OpenClaw session key → A2A context, so tool calls continue the task's delegation chain. */
  readonly contexts = new Map<string, string>();
  /** OpenClaw session key → the agent whose turn it runs (contract 1.4; "" for a gateway of one agent). */
  readonly agents = new Map<string, string>();
  private turnSeq = 0;

  constructor(
    private readonly link: ChannelLink,
    private readonly runtime: PluginRuntime,
    private readonly log: PluginLogger,
  ) {}

  async handleMessage(req: HandleMessageRequest, ctx: CallContext): Promise<HandleMessageResponse> {
    const deadline = Date.now() + STARTUP_WAIT_MS;
    // A peer can reach the endpoint while the gateway starts: between
    // Connect and the service taking the plugin's Platform handle, or before
    // OpenClaw has started the channel account.
    while (!this.platform && Date.now() < deadline && !ctx.signal.aborted) await new Promise((r) => setTimeout(r, 50));
    const platform = this.platform;
    if (!platform) return this.refuse(req, "the OpenClaw host is still starting the plugin; send the message again");
    let live: LiveChannel;
    try {
      live = this.link.current ?? (await this.link.wait(Math.max(0, deadline - Date.now())));
    } catch (err) {
      return this.refuse(req, (err as Error).message);
    }
    const turnId = `openclaw-${++this.turnSeq}`;
    // HandleMessage returns once the host has the message; the run goes on.
    void this.runTurn(live, req, platform).catch((err) =>
      this.log.error(`a2a-plugin: turn ${turnId} of task ${req.taskId} could not be reported: ${(err as Error).message}`));
    return { turnId };
  }

  /** Refuses a turn with why, logged in the gateway's log too. */
  private refuse(req: HandleMessageRequest, why: string): never {
    this.log.warn(`a2a-plugin: task ${req.taskId} not taken: ${why}`);
    throw new CallError(Code.UNAVAILABLE, why);
  }

  /** Dispatches one turn into the agent and reports its output. */
  private async runTurn(live: LiveChannel, req: HandleMessageRequest, platform: Platform): Promise<void> {
    const out = { platform: req.platform, chatId: req.chatId, taskId: req.taskId, agentId: req.agentId ?? "" };
    const sender = req.sender?.id || "a2a-peer";
    const finals: ReplyPayload[] = [];
    const errors: string[] = [];
    const progress: Promise<unknown>[] = [];
    let dispatched: { admission: { kind: string }; dispatched: boolean };
    try {
      const resolved = resolveChannelInboundRouteEnvelope({
        cfg: live.cfg,
        channel: CHANNEL_ID,
        accountId: live.accountId,
        // One OpenClaw conversation per A2A context.
        peer: { kind: "direct", id: req.chatId },
        dmScope: "per-account-channel-peer",
      });
      const { buildEnvelope } = resolved;
      let route = resolved.route;
      if (req.agentId && req.agentId !== route.agentId) {
        // The A2A agent the message is for (contract 1.4) is one of
        // OpenClaw's agents: its own session, one per A2A context.
        const accountId = route.accountId ?? live.accountId;
        route = {
          ...route, agentId: req.agentId,
          sessionKey: buildAgentSessionKey({ agentId: req.agentId, channel: CHANNEL_ID, accountId, peer: { kind: "direct", id: req.chatId }, dmScope: route.dmScope }),
        };
      }
      this.contexts.set(route.sessionKey, req.chatId);
      this.agents.set(route.sessionKey, req.agentId ?? "");
      const now = Date.now();
      const target = `${CHANNEL_ID}:${req.chatId}`;
      const ctxPayload = live.runtime.inbound.buildContext({
        channel: CHANNEL_ID,
        accountId: route.accountId ?? live.accountId,
        messageId: req.messageId || req.taskId,
        messageIdFull: req.messageId || req.taskId,
        timestamp: now,
        from: target,
        sender: { id: sender, name: req.sender?.displayName || sender },
        conversation: { kind: "direct", id: req.chatId, label: sender },
        route: {
          agentId: route.agentId, dmScope: route.dmScope, accountId: route.accountId,
          routeSessionKey: route.sessionKey, dispatchSessionKey: route.sessionKey,
        },
        reply: { to: target, originatingTo: target },
        message: {
          body: buildEnvelope({ channel: "A2A", from: sender, timestamp: now, body: req.text }),
          bodyForAgent: req.text,
          rawBody: req.text,
          commandBody: req.text,
        },
        // The binary authenticated the peer and applied its trust policy
        // (the tier travels in the request); OpenClaw's DM ingress policy
        // has no peer list to check for this channel.
        channelIngress: "unsupported",
        // A2A peers send tasks, never OpenClaw slash commands.
        extra: { CommandInterpretationSuppressed: true },
      });
      dispatched = await live.runtime.inbound.dispatch({
        cfg: live.cfg,
        channel: CHANNEL_ID,
        accountId: live.accountId,
        route: { agentId: route.agentId, dmScope: route.dmScope, sessionKey: route.sessionKey },
        ctxPayload,
        delivery: {
          deliver: async (payload, info) => {
            if (info.kind === "final" && isReplyPayloadTerminalContent(payload)) {
              finals.push(payload);
              return;
            }
            const text = payload.text?.trim();
            if (text) progress.push(platform.send({ ...out, kind: "SEND_KIND_PROGRESS", text }).catch(() => {}));
          },
          onError: (error) => {
            errors.push(error instanceof Error ? error.message : String(error));
          },
        },
        replyOptions: { sourceReplyDeliveryMode: "automatic" },
        replyPipeline: {},
      });
    } catch (err) {
      this.log.warn(`a2a-plugin: task ${req.taskId}: OpenClaw could not run the turn: ${(err as Error).stack ?? err}`);
      await platform.processingComplete({ ...out, outcome: "OUTCOME_FAILURE", error: `OpenClaw could not run the turn: ${(err as Error).message}` });
      return;
    }
    await Promise.all(progress);
    // The dispatch resolves once the agent's run has finished.
    if (dispatched.admission.kind !== "dispatch") {
      await platform.processingComplete({ ...out, outcome: "OUTCOME_REJECTED", error: `OpenClaw declined the turn (${dispatched.admission.kind})` });
      return;
    }
    if (finals.length > 0) {
      const text = finals.map((p) => p.text ?? "").filter((t) => t !== "").join("\n\n");
      await platform.send({ ...out, kind: "SEND_KIND_FINAL", text, parts: mediaParts(finals), endsTurn: true });
      return;
    }
    if (errors.length > 0 || !dispatched.dispatched) {
      this.log.warn(`a2a-plugin: task ${req.taskId}: the agent's run failed: ${errors.join("; ") || "not dispatched"}`);
      await platform.processingComplete({
        ...out, outcome: "OUTCOME_FAILURE",
        error: errors.length ? `the OpenClaw agent failed: ${errors.join("; ")}` : "OpenClaw accepted the turn without running it",
      });
      return;
    }
    await platform.processingComplete({ ...out, outcome: "OUTCOME_SUCCESS" });
  }

  /** OpenClaw cannot abort a dispatched run: nothing is stopped. */
  async cancelTurn(req: CancelTurnRequest): Promise<CancelTurnResponse> {
    this.log.info(`a2a-plugin: OpenClaw cannot stop a running turn; task ${req.taskId} goes on (${req.reason})`);
    return { cancelled: false };
  }

  /**
   * OpenClaw gives plugins no list of its agent's tools, so the Agent Card
   * advertises none of them.
   */
  async listTools(): Promise<ToolDefinition[]> {
    return [];
  }

  /** A one-shot completion with OpenClaw's configured model (semantic routing). */
  async complete(req: CompleteRequest): Promise<CompleteResponse> {
    const llm = this.runtime.llm;
    if (!llm) throw new CallError(Code.UNIMPLEMENTED, "this OpenClaw offers plugins no model completion (api.runtime.llm)");
    const res = await llm.complete({
      messages: [{ role: "user", content: req.prompt }],
      systemPrompt: req.system || undefined,
      maxTokens: req.maxTokens || undefined,
      purpose: "a2a-plugin.route",
    });
    return { text: res.text ?? "" };
  }
}

/** The media of the final payloads, as URL parts. */
function mediaParts(finals: ReplyPayload[]): PartInit[] {
  const urls = finals.flatMap((p) => [...(p.mediaUrls ?? []), ...(p.mediaUrl ? [p.mediaUrl] : [])]);
  return [...new Set(urls)].map((url) => ({ url }));
}
