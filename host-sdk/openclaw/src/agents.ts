// OpenClaw's agents as the contract's host agents (contract 1.4): one
// gateway runs several isolated agents (agents.entries, or the older
// agents.list), and the binary serves each as an A2A agent of its own on
// the one port. A gateway with one agent declares none: the binary then
// serves it as the one agent it always did.
import type { HostAgentInit } from "@a2a-plugin/host-sdk";
import type { OpenClawConfig } from "openclaw/plugin-sdk/core";

/** An agent id the binary accepts (a path segment and a gRPC tenant). */
const AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

interface AgentEntry {
  id?: string;
  name?: string;
  default?: boolean;
  identity?: { name?: string; theme?: string; description?: string };
  description?: string;
}

/**
 * The configured agents, the default first (the entry marked default, else
 * "main", else the first). Ids OpenClaw accepts but the binary cannot serve
 * (upper case, other characters) are left out, with why in skipped.
 */
export function hostAgents(cfg: OpenClawConfig): { agents: HostAgentInit[]; skipped: string[] } {
  const roster = (cfg as { agents?: { entries?: Record<string, AgentEntry>; list?: AgentEntry[] } }).agents ?? {};
  const entries: AgentEntry[] = roster.entries && typeof roster.entries === "object"
    ? Object.entries(roster.entries).map(([id, e]) => ({ ...(e ?? {}), id }))
    : Array.isArray(roster.list) ? roster.list.filter(Boolean) : [];
  const skipped: string[] = [];
  const agents: (HostAgentInit & { isDefault: boolean })[] = [];
  for (const e of entries) {
    const id = String(e.id ?? "").trim();
    if (!AGENT_ID.test(id)) {
      skipped.push(`agent "${id}" is not served over A2A: its id must be lower-case letters, digits, '-' and '_'`);
      continue;
    }
    agents.push({
      id,
      name: e.identity?.name || e.name || id,
      description: e.identity?.description || e.description || `The OpenClaw agent ${id}.`,
      isDefault: e.default === true,
    });
  }
  if (agents.length < 2) return { agents: [], skipped };
  const first = agents.findIndex((a) => a.isDefault) >= 0 ? agents.findIndex((a) => a.isDefault) : Math.max(0, agents.findIndex((a) => a.id === "main"));
  const ordered = [agents[first], ...agents.filter((_, i) => i !== first)];
  return { agents: ordered.map(({ isDefault: _d, ...a }) => a), skipped };
}
