// Shared pieces of the host library's tests: the real plugin binary, a
// scripted host that records every callback, and a small A2A JSON-RPC
// client.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
/** The real a2a-plugin binary (make build puts it in bin/plugins). */
export const PLUGIN_BIN = process.env.HOSTSDK_PLUGIN_BIN ?? path.resolve(here, "../../../bin/plugins/a2a-plugin");
if (!fs.existsSync(PLUGIN_BIN)) throw new Error(`${PLUGIN_BIN} is missing: run make build (or set HOSTSDK_PLUGIN_BIN)`);

/**
 * A host whose agent follows the inbound text: "hang" waits until
 * cancelled, "fail" ends the turn FAILURE, "progress" reports progress
 * first, anything else is echoed as the final answer (ends_turn). Every
 * callback is recorded in calls.
 */
export class ScriptedHost {
  constructor({ tools = [], complete = false, delegations = false } = {}) {
    this.calls = [];
    this.tools = tools;
    this.platform = undefined;
    this.waiters = [];
    this.hung = new Map();
    if (complete) this.complete = async (req) => { this.record("complete", req); return { text: complete }; };
    if (delegations) this.recordDelegation = async (req) => { this.record("recordDelegation", req); };
  }
  record(kind, req) {
    this.calls.push({ kind, req });
    for (const w of [...this.waiters]) if (w.match({ kind, req })) { this.waiters.splice(this.waiters.indexOf(w), 1); w.resolve({ kind, req }); }
  }
  /** Resolves with the first call (recorded or later) that match accepts. */
  waitFor(match, ms = 15000) {
    const seen = this.calls.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("timed out waiting for a host call")), ms);
      this.waiters.push({ match, resolve: (c) => { clearTimeout(t); resolve(c); } });
    });
  }
  async handleMessage(req) {
    this.record("handleMessage", req);
    const out = { platform: req.platform, chatId: req.chatId, taskId: req.taskId };
    // The sender's own words (req.text may be framed as untrusted input).
    const words = req.parts.map((p) => p.text ?? "").join(" ");
    setImmediate(async () => {
      try {
        if (/\bhang\b/.test(words)) { this.hung.set(req.taskId, out); return; }
        if (/\bfail\b/.test(words)) {
          await this.platform.processingComplete({ ...out, outcome: "OUTCOME_FAILURE", error: "the scripted agent fails" });
          return;
        }
        if (/\bprogress\b/.test(words)) await this.platform.send({ ...out, kind: "SEND_KIND_PROGRESS", text: "working on it" });
        await this.platform.send({ ...out, kind: "SEND_KIND_FINAL", text: "echo: " + words, endsTurn: true });
      } catch (err) {
        this.record("sendFailed", { error: String(err) });
      }
    });
    return { turnId: "turn-" + req.taskId };
  }
  async cancelTurn(req) {
    this.record("cancelTurn", req);
    const out = this.hung.get(req.taskId);
    if (!out) return { cancelled: false };
    this.hung.delete(req.taskId);
    await this.platform.processingComplete({ ...out, outcome: "OUTCOME_CANCELLED" });
    return { cancelled: true };
  }
  async listTools() {
    this.record("listTools", {});
    return this.tools;
  }
}

/** A JSON-RPC call to an A2A endpoint; resolves with the whole response. */
export async function rpc(url, method, params) {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return r.json();
}

/**
 * The agent's answer in a task (JSON as the plugin serves it): the text of
 * its "answer" artifact.
 */
export function answerOf(task) {
  const art = (task?.artifacts ?? []).find((a) => a.name === "answer") ?? task?.artifacts?.[0];
  return (art?.parts ?? []).map((p) => p.text ?? "").join("");
}

/** A user message with text. */
export function msg(text, extra = {}) {
  return { message: { messageId: "m-" + Math.random().toString(36).slice(2), role: "ROLE_USER", parts: [{ text }], ...extra } };
}

/** Whether a process id is alive (and not a zombie). */
export function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

/** Polls cond every 50 ms until it is true or ms passed. */
export async function eventually(cond, ms = 15000, what = "condition") {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Plugin config for tests: free port, memory store, loopback peers allowed. */
export function a2aConfig(extra = {}) {
  return { port: 0, store: "memory", allow_loopback_urls: true, rate_limit: 0, ...extra };
}
