// The OpenClaw channel through which A2A tasks arrive: OpenClaw starts its
// account (gateway.startAccount) and hands it the channel runtime that
// dispatches inbound messages into the live agent; the link keeps that
// runtime for the turns (turns.ts) while the account runs.
import {
  createChatChannelPlugin, type ChannelGatewayContext, type ChannelRuntime, type OpenClawConfig,
} from "openclaw/plugin-sdk/core";
import { waitUntilAbort } from "openclaw/plugin-sdk/channel-lifecycle";
import { ACCOUNT_ID, CHANNEL_ID } from "./ids.js";

/** The running channel account: what dispatching a turn needs. */
export interface LiveChannel {
  cfg: OpenClawConfig;
  accountId: string;
  runtime: ChannelRuntime;
}

/** Holds the live channel account, if OpenClaw is running it. */
export class ChannelLink {
  private live: LiveChannel | undefined;
  private waiters: ((l: LiveChannel) => void)[] = [];

  /** The running account, or undefined before OpenClaw started it. */
  get current(): LiveChannel | undefined {
    return this.live;
  }

  /** Resolves with the running account once OpenClaw has started it (or rejects after ms). */
  wait(ms: number): Promise<LiveChannel> {
    if (this.live) return Promise.resolve(this.live);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        reject(new Error(`the OpenClaw channel "${CHANNEL_ID}" is not running (enable it: channels.${CHANNEL_ID}.enabled: true)`));
      }, ms);
      const done = (l: LiveChannel) => {
        clearTimeout(t);
        resolve(l);
      };
      this.waiters.push(done);
    });
  }

  /** @internal Called by the channel's startAccount. */
  attach(l: LiveChannel): void {
    this.live = l;
    for (const w of this.waiters.splice(0)) w(l);
  }

  /** @internal Called when the account stops. */
  detach(l: LiveChannel): void {
    if (this.live === l) this.live = undefined;
  }
}

interface Account {
  accountId: string;
  enabled: boolean;
  configured: boolean;
}

function section(cfg: OpenClawConfig): Record<string, unknown> {
  return ((cfg.channels ?? {}) as Record<string, Record<string, unknown> | undefined>)[CHANNEL_ID] ?? {};
}

/** The channel plugin object, bound to link. */
export function createChannel(link: ChannelLink) {
  return createChatChannelPlugin<Account>({
    base: {
      id: CHANNEL_ID,
      meta: {
        id: CHANNEL_ID,
        label: "A2A (a2a-plugin)",
        selectionLabel: "A2A v1.0 (a2a-plugin: streaming, push, tasks, cancel)",
        docsPath: "/channels/a2a-plugin",
        blurb: "Serve the whole A2A v1.0 surface from the live agent and delegate to other agents.",
      },
      capabilities: { chatTypes: ["direct"] },
      config: {
        // One account: the plugin binary serves one A2A endpoint.
        listAccountIds: () => [ACCOUNT_ID],
        resolveAccount: (cfg, accountId) => {
          const enabled = section(cfg).enabled !== false;
          return { accountId: accountId ?? ACCOUNT_ID, enabled, configured: true };
        },
        inspectAccount: (cfg) => ({ enabled: section(cfg).enabled !== false, configured: true }),
        isConfigured: () => true,
      },
      gateway: {
        startAccount: async (ctx: ChannelGatewayContext<Account>) => {
          if (!ctx.channelRuntime) throw new Error(`channel ${CHANNEL_ID}: OpenClaw gave the account no channel runtime`);
          const live: LiveChannel = { cfg: ctx.cfg, accountId: ctx.accountId, runtime: ctx.channelRuntime };
          ctx.setStatus({ accountId: ctx.accountId, running: true, configured: true, enabled: true });
          link.attach(live);
          try {
            await waitUntilAbort(ctx.abortSignal);
          } finally {
            link.detach(live);
            ctx.setStatus({ accountId: ctx.accountId, running: false });
          }
        },
      },
    },
  });
}
