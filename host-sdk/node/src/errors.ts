// Errors a host sees, and the gRPC status codes the contract uses.
import { status as grpcStatus } from "@grpc/grpc-js";

/** gRPC status codes (google.rpc.Code). */
export const Code = grpcStatus;
export type Code = grpcStatus;

/**
 * A failed call: the gRPC code and message the plugin (or the transport)
 * answered with. A host handler may throw one to answer a plugin's call with
 * that code; any other thrown error answers UNKNOWN with its message.
 */
export class CallError extends Error {
  readonly code: Code;
  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CallError";
    this.code = code;
  }
}

/** A host callback the host does not implement (answers UNIMPLEMENTED). */
export class UnimplementedError extends CallError {
  constructor(method: string) {
    super(Code.UNIMPLEMENTED, `the host does not implement HostService.${method}`);
    this.name = "UnimplementedError";
  }
}

/**
 * A call made while the plugin has no running process: starting,
 * restarting after a crash, failed or stopped. reason says which.
 */
export class PluginUnavailableError extends Error {
  readonly plugin: string;
  readonly reason: string;
  constructor(plugin: string, reason: string, options?: { cause?: unknown }) {
    super(`plugin "${plugin}" is unavailable (${reason})`, options);
    this.name = "PluginUnavailableError";
    this.plugin = plugin;
    this.reason = reason;
  }
}

/** An executable that did not complete the go-plugin handshake. */
export class HandshakeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "HandshakeError";
  }
}

/** Turns what grpc-js rejects with into a CallError. */
export function fromServiceError(err: unknown, what: string): CallError {
  const e = err as { code?: number; details?: string; message?: string };
  if (typeof e?.code === "number") {
    return new CallError(e.code as Code, `${what}: ${e.details || e.message || "failed"}`, { cause: err });
  }
  return new CallError(Code.UNKNOWN, `${what}: ${e?.message ?? String(err)}`, { cause: err });
}

/** The code and message a thrown handler error answers a plugin with. */
export function toStatus(err: unknown): { code: Code; details: string } {
  if (err instanceof CallError) return { code: err.code, details: err.message };
  const e = err as { code?: unknown; message?: string };
  if (typeof e?.code === "number") return { code: e.code as Code, details: e.message ?? String(err) };
  if ((err as Error)?.name === "AbortError" || (err as Error)?.name === "TimeoutError") {
    return { code: Code.DEADLINE_EXCEEDED, details: (err as Error).message };
  }
  return { code: Code.UNKNOWN, details: e?.message ?? String(err) };
}
