// The calling side of a contract 1.2 call stream (PlatformAdapterService.
// SendStream): many Send calls over one long-lived bidirectional stream,
// matched to their answers by call id, with the caller's deadline carried
// in timeout_ms and a cancel envelope when a caller stops waiting. The
// rules follow plugin/callstream.go: a stream that breaks fails the calls
// sent on it as UNAVAILABLE ("outcome unknown", never resent); a callee
// that refuses the stream as UNIMPLEMENTED before answering, or three
// streams in a row that end unanswered, make every later call unary; a
// request over 256 KiB goes unary so it never holds up the small ones.
import type * as grpc from "@grpc/grpc-js";
import { CallError, Code, fromServiceError } from "./errors.js";
import type { CallOpts } from "./proto.js";

/** Requests larger than this go as unary calls. */
export const CALL_STREAM_MAX_BYTES = 256 << 10;
/** Streams in a row that may end unanswered before calls go unary for good. */
export const MAX_DEAD_STREAMS = 3;

type Duplex = grpc.ClientDuplexStream<Record<string, unknown>, Record<string, unknown>>;

interface Pending {
  resolve(v: Record<string, unknown>): void;
  reject(e: unknown): void;
  /** When the call was written (from then on it may have reached the callee). */
  sent: boolean;
  retryUnary: () => void;
}

interface Open {
  stream: Duplex;
  pending: Map<number, Pending>;
  answered: boolean;
}

export class CallStreamClient {
  private cur: Open | undefined;
  private next = 0;
  private dead = 0;
  private fallback = false;
  private closed = false;

  constructor(
    private readonly method: string,
    private readonly open: () => Duplex,
    private readonly unary: (req: Record<string, unknown>, opts: CallOpts) => Promise<Record<string, unknown>>,
  ) {}

  /** Whether calls go as unary RPCs for good. */
  get unaryOnly(): boolean {
    return this.fallback;
  }

  /** Makes one call (on the stream when it can) and resolves with its answer. */
  call(req: Record<string, unknown>, size: number, opts: CallOpts = {}): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(new CallError(Code.CANCELLED, `${this.method}: the connection is closed`));
    if (this.fallback || size > CALL_STREAM_MAX_BYTES) return this.unary(req, opts);
    if (opts.signal?.aborted) return Promise.reject(new CallError(Code.CANCELLED, `${this.method}: the caller gave up`));
    const o = this.conn();
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
      };
      const giveUp = (err: CallError) => {
        if (!o.pending.delete(id)) return;
        done();
        if (o.stream.writable) o.stream.write({ callId: id, cancel: true });
        reject(err);
      };
      const onAbort = () => giveUp(new CallError(Code.CANCELLED, `${this.method}: the caller gave up`));
      o.pending.set(id, {
        resolve: (v) => { done(); resolve(v); },
        reject: (e) => { done(); reject(e); },
        sent: true,
        retryUnary: () => { done(); this.unary(req, opts).then(resolve, reject); },
      });
      if (opts.timeoutMs && opts.timeoutMs > 0) {
        timer = setTimeout(() => giveUp(new CallError(Code.DEADLINE_EXCEEDED, `${this.method}: deadline exceeded`)), opts.timeoutMs);
      }
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      o.stream.write({ callId: id, request: req, timeoutMs: Math.max(0, Math.ceil(opts.timeoutMs ?? 0)) });
    });
  }

  private conn(): Open {
    if (this.cur) return this.cur;
    const o: Open = { stream: this.open(), pending: new Map(), answered: false };
    this.cur = o;
    o.stream.on("data", (resp: Record<string, unknown>) => {
      o.answered = true;
      this.dead = 0;
      const p = o.pending.get(resp.callId as number);
      if (!p) return;
      o.pending.delete(resp.callId as number);
      const e = resp.error as { code: number; message: string } | undefined | null;
      if (e) p.reject(new CallError(e.code as Code, `${this.method}: ${e.message}`));
      else p.resolve((resp.response as Record<string, unknown>) ?? {});
    });
    const end = (err: grpc.ServiceError | undefined) => {
      if (this.cur === o) this.cur = undefined;
      const refused = err?.code === Code.UNIMPLEMENTED && !o.answered;
      if (refused) this.fallback = true;
      if (!o.answered && !this.closed && ++this.dead >= MAX_DEAD_STREAMS) this.fallback = true;
      const failure = err
        ? new CallError(Code.UNAVAILABLE, `${this.method}: the call stream broke (${err.details || err.message}); the call's outcome is unknown`)
        : new CallError(Code.UNAVAILABLE, `${this.method}: the call stream ended (the other side closed it); the call's outcome is unknown`);
      const pending = [...o.pending.values()];
      o.pending.clear();
      for (const p of pending) {
        if (refused) p.retryUnary();
        else p.reject(this.closed ? new CallError(Code.CANCELLED, `${this.method}: the connection is closed`) : failure);
      }
    };
    o.stream.on("error", (err: grpc.ServiceError) => end(err));
    o.stream.on("end", () => end(undefined));
    return o;
  }

  /** Ends the open stream; later calls fail. */
  close(): void {
    this.closed = true;
    this.cur?.stream.cancel();
  }
}

/** Wraps a grpc-js unary rejection as the CallError the stream would give. */
export function unaryError(method: string) {
  return (err: unknown) => {
    throw fromServiceError(err, method);
  };
}
