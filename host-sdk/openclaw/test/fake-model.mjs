// A fake OpenAI-compatible model server on loopback for the OpenClaw tests:
// POST /v1/chat/completions (streamed or not) answers from a few rules over
// the conversation it is sent, and records every request so a test can see
// what the model saw. GET /v1/models lists the one model.
import http from "node:http";

export const MODEL_ID = "fake-model";

/** Text of a chat message's content (a string or an array of parts). */
function contentText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === "string" ? p : p?.text ?? "")).join("");
  return "";
}

/**
 * The text of the last user message that is not OpenClaw's own context
 * block (it sends that as a separate user message).
 */
export function lastUserText(messages) {
  const m = [...messages].reverse().find((m) => m.role === "user" && !isInternalContext(m));
  return m ? contentText(m.content) : "";
}

/** Whether m is the context block OpenClaw sends as a user message of its own. */
function isInternalContext(m) {
  return m.role === "user" && contentText(m.content).trimStart().startsWith("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT");
}

/**
 * What the sender said in a user message OpenClaw built: after its
 * "Conversation info" block and before its "Runtime:" line.
 */
export function userWords(text) {
  let t = text;
  const fence = t.lastIndexOf("```\n\n");
  if (fence >= 0) t = t.slice(fence + 5);
  const rt = t.indexOf("\n\nRuntime:");
  if (rt >= 0) t = t.slice(0, rt);
  // The a2a-plugin binary frames what a remote agent sends as untrusted.
  const framed = /\[A2A UNTRUSTED INPUT BEGIN[^\]]*\]\n\([^\n]*\)\n([\s\S]*)\n\[A2A UNTRUSTED INPUT END[^\]]*\]/.exec(t);
  if (framed) t = framed[1];
  return t.trim();
}

/** Every user-visible text of a request (what the model was shown). */
export function requestText(request) {
  return (request.messages ?? []).map((m) => contentText(m.content)).join("\n");
}

/**
 * Starts the server. rules(messages) may return {text} or {toolCall:{name,
 * arguments}} or a promise of one; the default rules answer "fake reply: <last
 * user text>", call a2a_call when asked to "ask the peer", and report a tool
 * result back as "the peer answered: <result>".
 */
export async function startFakeModel({ rules } = {}) {
  const requests = [];
  const gates = new Map();
  const gate = (key) => {
    let g = gates.get(key);
    if (!g) {
      let release;
      const p = new Promise((r) => (release = r));
      g = { p, release };
      gates.set(key, g);
    }
    return g;
  };
  const decide = rules ?? (async (messages, request) => {
    // OpenClaw appends its context block after a tool result: look past it.
    const last = [...messages].reverse().find((m) => !isInternalContext(m));
    if (last?.role === "tool") return { text: `the peer answered: ${contentText(last.content)}` };
    const said = userWords(lastUserText(messages));
    // A routing question (a2a_route asking the host's model): the last candidate.
    const candidates = [...lastUserText(messages).matchAll(/^- ([\w.-]+): /gm)].map((m) => m[1]);
    if (/Candidate agents:/.test(lastUserText(messages)) && candidates.length) return { text: candidates.at(-1) };
    const hold = /hold until released (\S+)/.exec(said);
    if (hold) await gate(hold[1]).p;
    const tools = (request.tools ?? []).map((t) => t.function?.name);
    // OpenClaw may defer plugin tools behind its tool_call meta-tool.
    const call = (name, args) => (tools.includes(name)
      ? { toolCall: { name, arguments: args } }
      : { toolCall: { name: "tool_call", arguments: { id: name, args } } });
    const ask = /ask the peer (\S+) to: (.*)$/m.exec(said);
    if (ask) return call("a2a_call", { agent: ask[1], message: ask[2].trim() });
    const route = /^find the right peer for: (.*)$/m.exec(said);
    if (route) return call("a2a_route", { message: route[1].trim() });
    return { text: `fake reply: ${said}` };
  });

  const server = http.createServer(async (req, res) => {
    try {
      if (req.method === "GET" && req.url.endsWith("/models")) {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ object: "list", data: [{ id: MODEL_ID, object: "model", owned_by: "test" }] }));
        return;
      }
      if (req.method === "POST" && req.url.endsWith("/reply")) {
        // The same rules for a host without a chat client (the reference
        // host's command agent posts the sender's words here with curl).
        let text = "";
        for await (const chunk of req) text += chunk;
        requests.push({ reply: text });
        const answer = await decide([{ role: "user", content: text }], { tools: [] });
        res.setHeader("content-type", "text/plain; charset=utf-8");
        res.end(answer.text ?? "");
        return;
      }
      if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      let body = "";
      for await (const chunk of req) body += chunk;
      const request = JSON.parse(body);
      requests.push(request);
      const answer = await decide(request.messages ?? [], request);
      const id = `chatcmpl-${requests.length}`;
      const created = Math.floor(Date.now() / 1000);
      const toolCalls = answer.toolCall
        ? [{ index: 0, id: `call_${requests.length}`, type: "function",
             function: { name: answer.toolCall.name, arguments: JSON.stringify(answer.toolCall.arguments) } }]
        : undefined;
      const finish = toolCalls ? "tool_calls" : "stop";
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      if (request.stream) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        const send = (delta, finish_reason = null, extra = {}) =>
          res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: request.model,
            choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`);
        send({ role: "assistant", content: "" });
        if (toolCalls) send({ tool_calls: toolCalls });
        else {
          // Two chunks, so streaming really streams.
          const half = Math.ceil(answer.text.length / 2);
          send({ content: answer.text.slice(0, half) });
          send({ content: answer.text.slice(half) });
        }
        send({}, finish, { usage });
        res.write("data: [DONE]\n\n");
        res.end();
        return;
      }
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ id, object: "chat.completion", created, model: request.model, usage,
        choices: [{ index: 0, finish_reason: finish,
          message: { role: "assistant", content: toolCalls ? null : answer.text, ...(toolCalls ? { tool_calls: toolCalls } : {}) } }] }));
    } catch (err) {
      res.statusCode = 500;
      res.end(JSON.stringify({ error: { message: String(err?.stack ?? err) } }));
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    release: (key) => gate(key).release(),
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}
