// The host callback service (HostService) a host serves to its plugins
// through go-plugin's broker: the HostHandler a host implements, and the
// server that adapts it, with the Watch stream (heartbeats, then a shutdown
// notice) and the HandleMessages call stream of contract 1.2.
import * as grpc from "@grpc/grpc-js";
import type {
  CancelTurnRequest, CancelTurnResponseInit, CompleteRequest, CompleteResponseInit, HandleMessageRequest,
  HandleMessageResponseInit, RecordDelegationRequest, ToolDefinitionInit,
} from "./contract.js";
import { handleMessageFromPb, recordDelegationFromPb, toolToPb } from "./convert.js";
import { Code, UnimplementedError, toStatus } from "./errors.js";
import type { Logger } from "./log.js";
import { services } from "./proto.js";

/** What a host's callback gets besides the request: its cancellation. */
export interface CallContext {
  /** Aborted when the plugin stops waiting (deadline, cancel, connection gone). */
  signal: AbortSignal;
}

/**
 * What a host implements to serve its plugins. handleMessage injects an
 * inbound message into the live session and returns once the host took it;
 * the output goes back later through Platform.send and processingComplete.
 * complete and recordDelegation are optional (absent: UNIMPLEMENTED, and
 * they are left out of HostInfo.optional_rpcs). Throw a CallError to answer
 * with a gRPC code.
 */
export interface HostHandler {
  handleMessage(req: HandleMessageRequest, ctx: CallContext): Promise<HandleMessageResponseInit>;
  cancelTurn(req: CancelTurnRequest, ctx: CallContext): Promise<CancelTurnResponseInit>;
  listTools(ctx: CallContext): Promise<ToolDefinitionInit[]>;
  complete?(req: CompleteRequest, ctx: CallContext): Promise<CompleteResponseInit>;
  recordDelegation?(req: RecordDelegationRequest, ctx: CallContext): Promise<void>;
}

/** The optional HostService RPCs handler implements, for HostInfo.optional_rpcs. */
export function optionalRpcs(handler: HostHandler | undefined): string[] {
  const out: string[] = [];
  if (handler?.complete) out.push("Complete");
  if (handler?.recordDelegation) out.push("RecordDelegation");
  return out;
}

/** How often Watch carries a heartbeat by default. */
export const DEFAULT_HEARTBEAT_MS = 5000;

/** Call-stream workers are unbounded here: Node runs handlers concurrently on one thread. */

/**
 * HostServer serves HostService for one plugin process. shutdown(reason)
 * sends a ShutdownNotice on every Watch stream and ends them, so the plugin
 * knows the host stops it on purpose.
 */
export class HostServer {
  private readonly watches = new Set<grpc.ServerWritableStream<unknown, unknown>>();
  private shutdownReason: string | undefined;

  constructor(
    private readonly handler: HostHandler | undefined,
    private readonly log: Logger,
    private readonly heartbeatMs = DEFAULT_HEARTBEAT_MS,
  ) {}

  /** Registers HostService on server. */
  register(server: grpc.Server): void {
    server.addService(services().HostService.service, this.implementation());
  }

  /** Ends every Watch stream with a ShutdownNotice (first call only). */
  shutdown(reason: string): void {
    if (this.shutdownReason !== undefined) return;
    this.shutdownReason = reason;
    for (const w of this.watches) {
      w.write({ shutdown: { reason } });
      w.end();
    }
    this.watches.clear();
  }

  private need(): HostHandler {
    if (!this.handler) throw new UnimplementedError("HandleMessage");
    return this.handler;
  }

  private async handleMessage(req: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
    const res = await this.need().handleMessage(handleMessageFromPb(req), { signal });
    return { turnId: res?.turnId ?? "" };
  }

  private implementation(): grpc.UntypedServiceImplementation {
    const unaryCall = <Req, Res>(method: string, fn: (req: Req, signal: AbortSignal) => Promise<Res>) =>
      (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>) => {
        const ac = new AbortController();
        call.on("cancelled", () => ac.abort());
        fn(call.request, ac.signal).then(
          (res) => cb(null, res),
          (err) => {
            const st = toStatus(err);
            if (st.code !== Code.UNIMPLEMENTED) this.log.warn("host callback failed", { method, error: st.details });
            cb({ code: st.code, details: st.details });
          },
        );
      };
    return {
      HandleMessage: unaryCall("HandleMessage", (req: Record<string, unknown>, signal) => this.handleMessage(req, signal)),
      HandleMessages: (call: grpc.ServerDuplexStream<Record<string, unknown>, Record<string, unknown>>) => this.serveHandleMessages(call),
      CancelTurn: unaryCall("CancelTurn", async (req: Record<string, unknown>, signal) => {
        const res = await this.need().cancelTurn(req as unknown as CancelTurnRequest, { signal });
        return { cancelled: Boolean(res?.cancelled) };
      }),
      ListTools: unaryCall("ListTools", async (_req: unknown, signal) => {
        const tools = await this.need().listTools({ signal });
        return { tools: tools.map(toolToPb) };
      }),
      Complete: unaryCall("Complete", async (req: Record<string, unknown>, signal) => {
        if (!this.handler?.complete) throw new UnimplementedError("Complete");
        const res = await this.handler.complete(req as unknown as CompleteRequest, { signal });
        return { text: res.text ?? "" };
      }),
      RecordDelegation: unaryCall("RecordDelegation", async (req: Record<string, unknown>, signal) => {
        if (!this.handler?.recordDelegation) throw new UnimplementedError("RecordDelegation");
        await this.handler.recordDelegation(recordDelegationFromPb(req), { signal });
        return {};
      }),
      Watch: (call: grpc.ServerWritableStream<unknown, unknown>) => this.serveWatch(call),
    };
  }

  /**
   * Serves HandleMessage calls on a call stream: each envelope runs as the
   * unary call would, concurrently, with the caller's deadline and a cancel
   * envelope aborting it; answers go back by call id in any order. The
   * stream ends after the calls in flight are answered.
   */
  private serveHandleMessages(call: grpc.ServerDuplexStream<Record<string, unknown>, Record<string, unknown>>): void {
    const inflight = new Map<number, AbortController>();
    let ended = false;
    const finish = () => {
      if (ended && inflight.size === 0) call.end();
    };
    call.on("data", (env: Record<string, unknown>) => {
      const id = env.callId as number;
      if (env.cancel) {
        inflight.get(id)?.abort();
        return;
      }
      const ac = new AbortController();
      inflight.set(id, ac);
      const ms = env.timeoutMs as number;
      const timer = ms > 0 ? setTimeout(() => ac.abort(new DOMException("deadline exceeded", "TimeoutError")), ms) : undefined;
      this.handleMessage((env.request as Record<string, unknown>) ?? {}, ac.signal).then(
        (response) => ({ callId: id, response }),
        (err) => {
          const st = toStatus(err);
          return { callId: id, error: { code: st.code, message: st.details } };
        },
      ).then((answer) => {
        clearTimeout(timer);
        inflight.delete(id);
        if (!call.cancelled && call.writable) call.write(answer);
        finish();
      });
    });
    call.on("end", () => {
      ended = true;
      finish();
    });
    call.on("cancelled", () => {
      for (const ac of inflight.values()) ac.abort();
    });
    call.on("error", () => {});
  }

  /** A heartbeat at once and then every interval, until shutdown or the plugin goes away. */
  private serveWatch(call: grpc.ServerWritableStream<unknown, unknown>): void {
    if (this.shutdownReason !== undefined) {
      call.write({ shutdown: { reason: this.shutdownReason } });
      call.end();
      return;
    }
    const beat = () => call.write({ heartbeat: { unixMs: Date.now() } });
    beat();
    this.watches.add(call);
    const t = setInterval(beat, this.heartbeatMs);
    t.unref();
    const stop = () => {
      clearInterval(t);
      this.watches.delete(call);
    };
    call.on("cancelled", stop);
    call.on("close", stop);
    call.on("finish", stop);
    call.on("error", stop);
  }
}
