// The typed handles a host holds on a plugin: Platform and Toolset (and the
// Lifecycle the Manager drives itself). They stay valid across restarts:
// every call goes to the plugin's current process, and fails at once with
// PluginUnavailableError while there is none.
import type * as grpc from "@grpc/grpc-js";
import type {
  CallToolRequestInit, ConnectResponse, ProcessingCompleteRequestInit, SendRequestInit, SendResponse, ToolDefinition,
  ToolProgress, ToolResult,
} from "./contract.js";
import { approxSize, sendToPb } from "./convert.js";
import { CallError, Code, fromServiceError } from "./errors.js";
import type { Instance, Plugin } from "./plugin.js";
import { unary, type CallOpts } from "./proto.js";

/** A plugin's platform adapter: a channel through which messages arrive and replies leave. */
export interface Platform {
  /** The plugin's contract minor (from Describe); 0 before the first. */
  readonly protocolMinor: number;
  /** Starts inbound serving; returns where the platform listens. */
  connect(opts?: CallOpts): Promise<ConnectResponse>;
  /** Stops inbound serving. */
  disconnect(opts?: CallOpts): Promise<void>;
  /**
   * Delivers agent output for a conversation and task. With endsTurn the
   * output also ends the turn (contract 1.1); to a plugin older than 1.1
   * the output goes without it and a ProcessingComplete SUCCESS follows,
   * so a host may set it whatever plugin answers.
   */
  send(req: SendRequestInit, opts?: CallOpts): Promise<SendResponse>;
  /** Tells the platform a turn ended. */
  processingComplete(req: ProcessingCompleteRequestInit, opts?: CallOpts): Promise<void>;
}

/** A plugin's tools, for the host's model. */
export interface Toolset {
  listTools(opts?: CallOpts): Promise<ToolDefinition[]>;
  /**
   * Runs one tool: onProgress gets its progress events, the promise its
   * result. A tool that fails in a way the model should see resolves with
   * isError set; a rejection means the call itself broke.
   */
  callTool(req: CallToolRequestInit, onProgress?: (p: ToolProgress) => void, opts?: CallOpts): Promise<ToolResult>;
}

async function call<T>(p: Plugin, method: string, f: (inst: Instance) => Promise<T>): Promise<T> {
  const inst = p.current();
  try {
    return await f(inst);
  } catch (err) {
    throw await p.callFailed(inst, method, err);
  }
}

const rethrow = (what: string) => (err: unknown) => {
  throw err instanceof CallError ? err : fromServiceError(err, what);
};

export class PlatformHandle implements Platform {
  constructor(private readonly p: Plugin) {}

  get protocolMinor(): number {
    return this.p.protocolMinor;
  }

  connect(opts?: CallOpts): Promise<ConnectResponse> {
    return call(this.p, "Connect", (i) =>
      unary<ConnectResponse>(i.proc.clients.platform, "connect", {}, opts).catch(rethrow("Connect")));
  }

  async disconnect(opts?: CallOpts): Promise<void> {
    await call(this.p, "Disconnect", (i) => unary(i.proc.clients.platform, "disconnect", {}, opts).catch(rethrow("Disconnect")));
  }

  send(req: SendRequestInit, opts?: CallOpts): Promise<SendResponse> {
    return call(this.p, "Send", async (i) => {
      if (req.endsTurn && i.desc.protocolMinor < 1) {
        const res = await sendOn(i, { ...req, endsTurn: false }, opts);
        await unary(i.proc.clients.platform, "processingComplete",
          { platform: req.platform ?? "", chatId: req.chatId ?? "", taskId: req.taskId ?? "", outcome: "OUTCOME_SUCCESS" }, opts)
          .catch(rethrow("the output was delivered but ending the turn failed (ProcessingComplete)"));
        return res;
      }
      return sendOn(i, req, opts);
    });
  }

  async processingComplete(req: ProcessingCompleteRequestInit, opts?: CallOpts): Promise<void> {
    await call(this.p, "ProcessingComplete", (i) =>
      unary(i.proc.clients.platform, "processingComplete", { ...req, taskId: req.taskId ?? "", error: req.error ?? "" }, opts)
        .catch(rethrow("ProcessingComplete")));
  }
}

/** Send on the instance's call stream (1.2) or as a unary RPC. */
async function sendOn(i: Instance, req: SendRequestInit, opts?: CallOpts): Promise<SendResponse> {
  const pb = sendToPb(req);
  const res = i.sends
    ? await i.sends.call(pb, approxSize(req), opts)
    : await unary<Record<string, unknown>>(i.proc.clients.platform, "send", pb, opts).catch(rethrow("Send"));
  return { messageId: (res.messageId as string) ?? "" };
}

export class ToolsetHandle implements Toolset {
  constructor(private readonly p: Plugin) {}

  listTools(opts?: CallOpts): Promise<ToolDefinition[]> {
    return call(this.p, "ListTools", async (i) => {
      const res = await unary<{ tools: ToolDefinition[] }>(i.proc.clients.toolset, "listTools", {}, opts).catch(rethrow("ListTools"));
      return res.tools;
    });
  }

  callTool(req: CallToolRequestInit, onProgress?: (p: ToolProgress) => void, opts?: CallOpts): Promise<ToolResult> {
    return call(this.p, `CallTool "${req.name}"`, (i) => new Promise<ToolResult>((resolve, reject) => {
      const callOpts: grpc.CallOptions = {};
      if (opts?.timeoutMs) callOpts.deadline = Date.now() + opts.timeoutMs;
      const stream = (i.proc.clients.toolset as unknown as {
        callTool(r: object, o: grpc.CallOptions): grpc.ClientReadableStream<Record<string, unknown>>;
      }).callTool({ ...req, callId: req.callId ?? "", platform: req.platform ?? "", chatId: req.chatId ?? "" }, callOpts);
      const onAbort = () => stream.cancel();
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
      let result: ToolResult | undefined;
      stream.on("data", (ev: Record<string, unknown>) => {
        if (ev.event === "progress") onProgress?.(ev.progress as ToolProgress);
        else if (ev.event === "result") result = ev.result as ToolResult;
      });
      stream.on("error", (err) => {
        opts?.signal?.removeEventListener("abort", onAbort);
        reject(fromServiceError(err, `CallTool "${req.name}"`));
      });
      stream.on("end", () => {
        opts?.signal?.removeEventListener("abort", onAbort);
        if (result) resolve(result);
        else reject(new CallError(Code.INTERNAL, `CallTool "${req.name}": the stream ended without a result`));
      });
    }));
  }
}
