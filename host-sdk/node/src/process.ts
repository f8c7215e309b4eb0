// One launched plugin process: spawned in its own process group with an
// explicit environment, its handshake line read from stdout, a gRPC
// connection over the Unix socket it announced (in the host's private
// socket directory), the broker stream opened, and its stdio drained —
// stdout and stderr pipes and go-plugin's StreamStdio — into the host's log
// and a ring kept for crash reports.
import * as grpc from "@grpc/grpc-js";
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { Broker } from "./broker.js";
import { HandshakeError } from "./errors.js";
import { grpcTarget, handshakeEnv, parseHandshake } from "./handshake.js";
import { LineRing, readableLogLine, type Logger } from "./log.js";
import { channelOptions, services, unary } from "./proto.js";

/** The clients of one plugin connection. */
export interface Clients {
  plugin: grpc.Client;
  platform: grpc.Client;
  toolset: grpc.Client;
  controller: grpc.Client;
  stdio: grpc.Client;
  broker: grpc.Client;
}

export interface LaunchOptions {
  path: string;
  env: Record<string, string>;
  socketDir: string;
  startTimeoutMs: number;
  log: Logger;
  stderr: LineRing;
}

/** A running plugin process and its connection. */
export class PluginProcess {
  readonly exited: Promise<string>;
  private exitState: string | undefined;

  private constructor(
    readonly child: ChildProcess,
    readonly clients: Clients,
    readonly broker: Broker,
    readonly stderrFrom: number,
    private readonly stdio: grpc.ClientReadableStream<unknown>,
    exited: Promise<string>,
  ) {
    this.exited = exited.then((s) => (this.exitState = s));
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Whether the process has exited, and how ("exit status 3", "signal SIGKILL"). */
  get exitStatus(): string | undefined {
    return this.exitState;
  }

  /** Launches path and completes the handshake, or throws a HandshakeError. */
  static async launch(o: LaunchOptions): Promise<PluginProcess> {
    const stderrFrom = o.stderr.mark();
    const child = spawn(o.path, [], {
      env: { ...o.env, ...handshakeEnv(o.socketDir) },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: a terminal's Ctrl-C does not reach it (the
      // host stops it in order), and killing the group kills its children.
      detached: true,
    });
    const exited = new Promise<string>((resolve) => {
      child.on("exit", (code, signal) => resolve(signal ? `signal ${signal}` : `exit status ${code}`));
      child.on("error", (err) => resolve(`could not start: ${err.message}`));
    });
    createInterface({ input: child.stderr! }).on("line", (line) => logPluginLine(o, line));
    const firstLine = new Promise<string>((resolve, reject) => {
      const rl = createInterface({ input: child.stdout! });
      let first = true;
      rl.on("line", (line) => {
        if (first) {
          first = false;
          resolve(line);
        } else if (line.trim() !== "") {
          o.log.info("plugin wrote to stdout", { line });
        }
      });
      rl.on("close", () => reject(new Error("closed its stdout")));
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`stayed silent for ${o.startTimeoutMs} ms`)), o.startTimeoutMs);
    });
    let line: string;
    try {
      line = await Promise.race([
        firstLine,
        timeout,
        exited.then((s) => { throw new Error(`exited before the handshake (${s})`); }),
      ]);
    } catch (err) {
      killGroup(child);
      const tail = o.stderr.notableSince(stderrFrom, 5);
      throw new HandshakeError(`handshake with ${o.path} failed: ${(err as Error).message}${tail.length ? "; stderr: " + tail.join(" | ") : ""}`);
    } finally {
      clearTimeout(timer);
    }
    let h;
    try {
      h = parseHandshake(line, o.path);
      if (h.serverCert !== "") throw new HandshakeError(`${o.path} answered with a TLS certificate this host did not ask for (AutoMTLS is not used)`);
    } catch (err) {
      killGroup(child);
      throw err;
    }
    const target = grpcTarget(h.network, h.address);
    const creds = grpc.credentials.createInsecure();
    const svc = services();
    const plugin = new svc.PluginService(target, creds, channelOptions);
    const opts = { ...channelOptions, channelOverride: plugin.getChannel() } as grpc.ClientOptions;
    const clients: Clients = {
      plugin,
      platform: new svc.PlatformAdapterService(target, creds, opts),
      toolset: new svc.ToolsetService(target, creds, opts),
      controller: new svc.GRPCController(target, creds, opts),
      stdio: new svc.GRPCStdio(target, creds, opts),
      broker: new svc.GRPCBroker(target, creds, opts),
    };
    const broker = new Broker(clients.broker, o.socketDir, o.log);
    broker.start();
    const stdio = (clients.stdio as unknown as { streamStdio(req: object): grpc.ClientReadableStream<{ channel: string; data: Buffer }> }).streamStdio({});
    const partial: Record<string, string> = { STDOUT: "", STDERR: "" };
    stdio.on("data", (d: { channel: string; data: Buffer }) => {
      const text = partial[d.channel] + d.data.toString("utf8");
      const lines = text.split("\n");
      partial[d.channel] = lines.pop() ?? "";
      for (const l of lines) {
        if (d.channel === "STDERR") logPluginLine(o, l);
        else if (l.trim()) o.log.info("plugin wrote to stdout", { line: l });
      }
    });
    stdio.on("error", () => {});
    return new PluginProcess(child, clients, broker, stderrFrom, stdio, exited);
  }

  /**
   * Stops the process: go-plugin's controller Shutdown (a graceful stop),
   * then, if it has not exited within graceMs, SIGKILL to its whole group.
   */
  async kill(graceMs = 2000): Promise<void> {
    if (this.exitState === undefined) {
      await unary(this.clients.controller, "shutdown", {}, { timeoutMs: graceMs }).catch(() => {});
      const t = setTimeout(() => killGroup(this.child), graceMs);
      await this.exited;
      clearTimeout(t);
    }
    // Children of the plugin (if any) go with its group.
    killGroup(this.child);
    this.close();
  }

  /** Releases the connection (the process may be gone already). */
  close(): void {
    this.stdio.cancel();
    this.broker.close();
    for (const c of Object.values(this.clients)) c.close();
  }
}

/** Logs one line of the plugin's stderr (hclog JSON at its level) and keeps it. */
function logPluginLine(o: LaunchOptions, line: string): void {
  if (line.trim() === "") return;
  const r = readableLogLine(line);
  const notable = r.level === undefined || r.level === "warn" || r.level === "error";
  o.stderr.add(r.text, notable);
  const fields = { ...(r.fields ?? {}) };
  const msg = r.message ?? line;
  switch (r.level) {
    case "trace": case "debug": o.log.debug(msg, fields); break;
    case "info": o.log.info(msg, fields); break;
    case "warn": o.log.warn(msg, fields); break;
    case "error": o.log.error(msg, fields); break;
    default: o.log.info("plugin wrote to stderr", { line });
  }
}

/** Kills a plugin's process group (it runs in its own). */
export function killGroup(child: ChildProcess): void {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
