// Every tool of the binary registered as an OpenClaw tool. OpenClaw needs
// them declared statically (openclaw.plugin.json contracts.tools), so the
// definitions come from tools.json, generated from the binary's ListTools
// when the package is built (scripts/gen-manifest.mjs); a test fails when
// they drift from what the binary offers.
import fs from "node:fs";
import type { Manager, ToolDefinition } from "@a2a-plugin/host-sdk";
import type { OpenClawPluginApi, ToolFactoryContext } from "openclaw/plugin-sdk/core";
import { TOOLS_FILE } from "./ids.js";
import type { OpenClawHost } from "./turns.js";

/** The tools the package declares (tools.json). */
export function declaredTools(file = TOOLS_FILE): ToolDefinition[] {
  return (JSON.parse(fs.readFileSync(file, "utf8")) as { tools: ToolDefinition[] }).tools;
}

/** The platform name of the binary's inbound turns (its HandleMessage.platform). */
const A2A_PLATFORM = "a2a";

/**
 * Registers each declared tool; a call runs it in the binary (manager) and
 * returns its text. A call made by the agent while it answers an A2A task
 * names that task's context, so the binary continues its delegation chain
 * and trace.
 */
export function registerTools(api: OpenClawPluginApi, manager: () => Manager | undefined, host: () => OpenClawHost): void {
  for (const def of declaredTools()) {
    const parameters = JSON.parse(def.parametersJsonSchema) as Record<string, unknown>;
    api.registerTool((ctx: ToolFactoryContext) => ({
      name: def.name,
      description: def.description,
      parameters,
      async execute(toolCallId, params, signal) {
        const m = manager();
        if (!m) throw new Error(`${def.name}: the a2a-plugin service is not running in this process (pid ${process.pid}; check the gateway log)`);
        const chatId = ctx.sessionKey ? host().contexts.get(ctx.sessionKey) : undefined;
        const res = await m.callTool({
          name: def.name,
          argumentsJson: JSON.stringify(params ?? {}),
          callId: toolCallId,
          platform: chatId ? A2A_PLATFORM : "openclaw",
          chatId: chatId ?? ctx.sessionKey ?? "",
          // The agent whose turn calls the tool (contract 1.4).
          agentId: ctx.sessionKey ? host().agents.get(ctx.sessionKey) ?? "" : "",
        }, undefined, { signal });
        return { content: [{ type: "text", text: res.content }], details: { isError: res.isError } };
      },
    }), { name: def.name });
  }
}
