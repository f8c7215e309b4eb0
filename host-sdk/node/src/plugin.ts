// One plugin as the host sees it: its current process (an Instance), its
// state, and its supervisor. A crashed process makes the plugin unavailable
// at once; it is restarted with a fresh process, exponential backoff and
// jitter, until it crashes too often (the tail of its stderr says why).
import type * as grpc from "@grpc/grpc-js";
import { CallStreamClient } from "./callstream.js";
import type { DescribeResponse } from "./contract.js";
import { PROTOCOL_MINOR } from "./contract.js";
import { Code, PluginUnavailableError } from "./errors.js";
import { PlatformHandle, ToolsetHandle, type Platform, type Toolset } from "./handles.js";
import { HostServer } from "./host.js";
import { LineRing, type Logger } from "./log.js";
import type { Manager } from "./manager.js";
import type { PluginProcess } from "./process.js";
import { unary } from "./proto.js";

/** Where a plugin is in its life. */
export type PluginState = "starting" | "ready" | "restarting" | "failed" | "stopped";

/** A running process of a plugin, configured and connected. */
export interface Instance {
  proc: PluginProcess;
  desc: DescribeResponse;
  env: Record<string, string>;
  host?: HostServer;
  hostServer?: grpc.Server;
  sends?: CallStreamClient;
  endpoints: string[];
}

export class Plugin {
  /** The plugin's stderr, last lines (hclog rendered as text). */
  readonly stderr = new LineRing(50);
  private inst: Instance | undefined;
  private _state: PluginState = "starting";
  private _name: string;
  private _desc: DescribeResponse | undefined;
  private _lastError: Error | undefined;
  private crashReason = "";
  private restarts: number[] = [];
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly platformHandle = new PlatformHandle(this);
  private readonly toolsetHandle = new ToolsetHandle(this);

  /** @internal */
  constructor(
    private readonly m: Manager,
    /** The executable. */
    readonly path: string,
    fileName: string,
  ) {
    this._name = fileName;
  }

  /** The name the plugin gave in Describe (its file name before that). */
  get name(): string {
    return this._name;
  }
  get state(): PluginState {
    return this._state;
  }
  /** The last Describe answer. */
  get describe(): DescribeResponse | undefined {
    return this._desc;
  }
  /** The contract minor of the last Describe (0 before the first). */
  get protocolMinor(): number {
    return this._desc?.protocolMinor ?? 0;
  }
  /** The most recent failure (kept after a successful restart). */
  get lastError(): Error | undefined {
    return this._lastError;
  }
  /** The running process id (0 while down). */
  get pid(): number {
    return this.inst?.proc.pid ?? 0;
  }
  /** Where the platform listens, from the last Connect. */
  get endpoints(): string[] {
    return this.inst ? [...this.inst.endpoints] : [];
  }
  /** The platform adapter, if Describe listed one. */
  platform(): Platform | undefined {
    return this._desc?.capabilities.includes("CAPABILITY_PLATFORM") ? this.platformHandle : undefined;
  }
  /** The toolset, if Describe listed one. */
  toolset(): Toolset | undefined {
    return this._desc?.capabilities.includes("CAPABILITY_TOOLSET") ? this.toolsetHandle : undefined;
  }
  private get log(): Logger {
    return this.m.log;
  }

  /** @internal The running instance, or throws PluginUnavailableError. */
  current(): Instance {
    if (!this.inst || this._state !== "ready") throw this.unavailable();
    return this.inst;
  }

  private unavailable(cause?: unknown): PluginUnavailableError {
    const why = {
      starting: "starting",
      ready: "ready",
      restarting: `restarting after crash: ${this.crashReason}`,
      failed: `failed${this._lastError ? ": " + this._lastError.message : ""}`,
      stopped: "stopped by the host",
    }[this._state];
    return new PluginUnavailableError(this._name, why, { cause });
  }

  /**
   * @internal Explains a failed call: when the process died under it, the
   * same PluginUnavailableError later callers get.
   */
  async callFailed(inst: Instance, _method: string, err: unknown): Promise<unknown> {
    const code = (err as { code?: number }).code;
    if (code === Code.UNAVAILABLE || code === Code.CANCELLED) {
      const died = await Promise.race([inst.proc.exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 200))]);
      if (died) {
        this.handleExit(inst);
        return this.unavailable(err);
      }
    }
    if (err instanceof Error && !err.message.startsWith("plugin ")) err.message = `plugin "${this._name}": ${err.message}`;
    return err;
  }

  /** @internal Takes the name and Describe answer of a launched process. */
  adopt(desc: DescribeResponse): void {
    this._name = desc.name;
    this._desc = desc;
  }

  /** @internal Makes inst the running instance and watches it. */
  install(inst: Instance): boolean {
    if (this.stopping) return false;
    this.inst = inst;
    this._desc = inst.desc;
    this._name = inst.desc.name;
    this._state = "ready";
    inst.proc.exited.then(() => this.handleExit(inst));
    this.log.info("plugin ready", { plugin: this._name, version: inst.desc.version, pid: inst.proc.pid, endpoints: inst.endpoints });
    this.m.emit({ plugin: this._name, kind: "ready" });
    return true;
  }

  /** @internal Marks the plugin failed for good. */
  fail(err: Error): void {
    if (this.stopping) return;
    this._state = "failed";
    this._lastError = err;
    this.log.error("plugin failed; it will not be restarted", { plugin: this._name, error: err.message });
    this.m.emit({ plugin: this._name, kind: "failed", error: err });
  }

  private handleExit(inst: Instance): void {
    if (this.inst !== inst || this.stopping) return;
    this.inst = undefined;
    inst.proc.close();
    inst.sends?.close();
    if (inst.hostServer) inst.proc.broker.stop(inst.hostServer);
    const tail = this.stderr.notableSince(inst.proc.stderrFrom, 5).map((l) => (l.length > 300 ? l.slice(0, 300) + "…" : l));
    const reason = `${inst.proc.exitStatus ?? "the process exited"}${tail.length ? "; stderr: " + tail.join(" | ") : " (no warning or error on stderr)"}`;
    this.crashReason = reason;
    const crash = new Error(`plugin "${this._name}" crashed: ${reason}`);
    this._lastError = crash;
    const policy = this.m.opts.restart;
    const recent = this.recentRestarts();
    this.m.emit({ plugin: this._name, kind: "crashed", error: crash });
    if (policy.maxRestarts < 0 || recent >= policy.maxRestarts) {
      this._state = "failed";
      this._lastError = policy.maxRestarts < 0
        ? new Error(`${crash.message}; restarts are disabled`)
        : new Error(`plugin "${this._name}" crashed after ${recent} restarts within ${policy.windowMs} ms; giving up: ${reason}`);
      this.log.error("plugin crashed too often; it will not be restarted", { plugin: this._name, error: this._lastError.message });
      this.m.emit({ plugin: this._name, kind: "failed", error: this._lastError });
      return;
    }
    this._state = "restarting";
    this.log.error("plugin crashed; restarting", { plugin: this._name, reason });
    this.scheduleRestart(recent);
  }

  private recentRestarts(): number {
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < this.m.opts.restart.windowMs);
    return this.restarts.length;
  }

  private scheduleRestart(attempt: number): void {
    this.restartTimer = setTimeout(async () => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      this.restarts.push(Date.now());
      try {
        const inst = await this.m.relaunch(this);
        if (this.stopping) {
          await inst.proc.kill();
          return;
        }
        await this.m.bringUp(this, inst);
        if (!this.install(inst)) await inst.proc.kill();
      } catch (err) {
        if (this.stopping) return;
        this._lastError = new Error(`restart of plugin "${this._name}" failed: ${(err as Error).message}`);
        if (this.recentRestarts() >= this.m.opts.restart.maxRestarts) {
          this.fail(new Error(`plugin "${this._name}" could not be restarted: ${(err as Error).message}`));
          return;
        }
        this.log.warn("plugin restart failed; trying again", { plugin: this._name, error: (err as Error).message });
        this.scheduleRestart(attempt + 1);
      }
    }, this.m.backoff(attempt));
  }

  /**
   * @internal Stops the plugin: Disconnect (platforms), Drain (each bounded
   * by the drain timeout), a ShutdownNotice on its Watch stream, go-plugin's
   * Shutdown, then SIGKILL to its process group if it lingers.
   */
  async stop(): Promise<Error[]> {
    if (this.stopping) return [];
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const inst = this.inst;
    this.inst = undefined;
    this._state = "stopped";
    const errs: Error[] = [];
    if (inst) {
      const t = this.m.opts.drainTimeoutMs;
      if (inst.desc.capabilities.includes("CAPABILITY_PLATFORM")) {
        await unary(inst.proc.clients.platform, "disconnect", {}, { timeoutMs: t }).catch((e) =>
          errs.push(new Error(`plugin "${this._name}": Disconnect: ${e.details ?? e.message}`)));
      }
      inst.sends?.close();
      const drained = await unary<{ abandoned: number }>(inst.proc.clients.plugin, "drain", { timeoutMs: t }, { timeoutMs: t }).catch((e) => {
        errs.push(new Error(`plugin "${this._name}": Drain: ${e.details ?? e.message}`));
        return undefined;
      });
      if (drained?.abandoned) this.log.warn("plugin abandoned in-flight work while draining", { plugin: this._name, abandoned: drained.abandoned });
      inst.host?.shutdown("the host is closing");
      await inst.proc.kill();
    }
    for (const e of errs) this.log.warn("plugin did not stop cleanly", { plugin: this._name, error: e.message });
    this.m.emit({ plugin: this._name, kind: "stopped" });
    return errs;
  }
}

/** The protocol minor a host of this library announces. */
export const HOST_PROTOCOL_MINOR = PROTOCOL_MINOR;
