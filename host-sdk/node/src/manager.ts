// The Manager: discovers, launches, configures, supervises and stops a
// host's plugins (the Node counterpart of host-sdk's Go Manager).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CallStreamClient } from "./callstream.js";
import type {
  CallToolRequestInit, ConfigureResponse, DescribeResponse, HostInfoInit, ToolDefinition, ToolProgress, ToolResult,
} from "./contract.js";
import { PROTOCOL_MINOR } from "./contract.js";
import { buildEnv, sameEnv } from "./env.js";
import { CallError, Code, HandshakeError, fromServiceError } from "./errors.js";
import { HostServer, optionalRpcs, DEFAULT_HEARTBEAT_MS, type HostHandler } from "./host.js";
import { nullLogger, type Logger, type LogLevel } from "./log.js";
import { Plugin, type Instance } from "./plugin.js";
import { PluginProcess } from "./process.js";
import { unary, type CallOpts } from "./proto.js";
import { makeOwnedDir } from "./tmpdirs.js";

/** How a crashed plugin is restarted (see the Go RestartPolicy). */
export interface RestartPolicy {
  /** Restarts allowed within windowMs (default 5; negative: never restart). */
  maxRestarts?: number;
  windowMs?: number;
  /** First delay (default 250 ms), doubling per recent restart up to maxBackoffMs (30 s), half of it random. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * The defaults of ManagerOptions' durations and of RestartPolicy, the values
 * of the host libraries' conformance kit (proto/agentplugin/v1/host-rules.json
 * "defaults"; test/hostrules.test.mjs keeps them equal).
 */
export const MANAGER_DEFAULTS = {
  startTimeoutMs: 10_000,
  drainTimeoutMs: 5_000,
  heartbeatMs: DEFAULT_HEARTBEAT_MS,
  restart: { maxRestarts: 5, windowMs: 5 * 60_000, baseBackoffMs: 250, maxBackoffMs: 30_000 },
} as const;

/** Something that happened to a plugin, for ManagerOptions.onEvent. */
export interface PluginEvent {
  /** The plugin's name (its path for "skipped"). */
  plugin: string;
  kind: "skipped" | "ready" | "crashed" | "failed" | "stopped";
  error?: Error;
}

export interface ManagerOptions {
  /** A plugins directory: every executable file in it is tried. */
  dir?: string;
  /** Plugin executables to launch besides those in dir. */
  paths?: string[];
  /** The host's callback service; absent means none (UNIMPLEMENTED), Watch is served anyway. */
  host?: HostHandler;
  /** Each plugin's configuration section, by plugin name ({} when absent). */
  config?: Record<string, unknown>;
  /** Where each plugin gets its own directory (dataDir/<name>, mode 0700); default a temporary one. */
  dataDir?: string;
  /** Log level for plugins (AGENTPLUGIN_LOG_LEVEL and Configure). */
  logLevel?: LogLevel;
  /** Receives the manager's logs and every plugin's parsed log lines. */
  logger?: Logger;
  /**
   * Describes the host. protocolMinor defaults to this library's minor and
   * optionalRpcs to the optional methods host implements; set
   * cancelTurnUnsupported when the host cannot stop a running turn.
   */
  hostInfo?: HostInfoInit;
  /** Extra variables plugins inherit from process.env, as names or PREFIX* patterns. */
  envAllow?: string[];
  /** Variables for one plugin, by name; they win over inherited ones. */
  pluginEnv?: Record<string, Record<string, string>>;
  /** Bounds each step of bringing a plugin up (default 10 s). */
  startTimeoutMs?: number;
  /** Bounds Disconnect and Drain at close (default 5 s). */
  drainTimeoutMs?: number;
  /** Watch heartbeat interval (default 5 s). */
  heartbeatMs?: number;
  restart?: RestartPolicy;
  onEvent?: (e: PluginEvent) => void;
}

interface ResolvedOptions extends ManagerOptions {
  startTimeoutMs: number;
  drainTimeoutMs: number;
  heartbeatMs: number;
  restart: Required<RestartPolicy>;
}

/** The name a plugin may have (usable as a directory name and config key). */
const VALID_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class Manager {
  /** @internal */ readonly opts: ResolvedOptions;
  /** @internal */ readonly log: Logger;
  /** The private (0700) directory of the plugins' and the broker's sockets. */
  readonly socketDir: string;
  private readonly _plugins: Plugin[] = [];
  private routes = new Map<string, Plugin>();
  private tmpDataDir: string | undefined;
  private started = false;
  private closed = false;

  constructor(opts: ManagerOptions) {
    const r = opts.restart ?? {};
    const d = MANAGER_DEFAULTS;
    this.opts = {
      ...opts,
      startTimeoutMs: opts.startTimeoutMs ?? d.startTimeoutMs,
      drainTimeoutMs: opts.drainTimeoutMs ?? d.drainTimeoutMs,
      heartbeatMs: opts.heartbeatMs ?? d.heartbeatMs,
      restart: {
        maxRestarts: r.maxRestarts ?? d.restart.maxRestarts,
        windowMs: r.windowMs ?? d.restart.windowMs,
        baseBackoffMs: r.baseBackoffMs ?? d.restart.baseBackoffMs,
        maxBackoffMs: Math.max(r.maxBackoffMs ?? d.restart.maxBackoffMs, r.baseBackoffMs ?? d.restart.baseBackoffMs),
      },
    };
    this.log = opts.logger ?? nullLogger;
    // The plugins' sockets and the host's broker sockets live in a private
    // directory: only this user can connect, so no AutoMTLS is needed. It
    // names this process, and those killed hosts left are swept first.
    this.socketDir = makeOwnedDir("agentplugin-");
  }

  /** Every loaded plugin (whatever its state), sorted by name. */
  plugins(): Plugin[] {
    return [...this._plugins];
  }

  /** The plugin with this (described) name. */
  plugin(name: string): Plugin | undefined {
    return this._plugins.find((p) => p.name === name);
  }

  /**
   * Discovers the candidates and brings each up: handshake, Describe,
   * Configure (HostService served through the broker), Connect. Candidates
   * that fail the handshake or Describe are skipped (logged, "skipped"
   * event); a plugin refusing its configuration is left failed and named in
   * the error this rejects with, while the others stay usable.
   */
  async start(): Promise<void> {
    if (this.closed) throw new Error("hostsdk: start after close");
    if (this.started) throw new Error("hostsdk: start called twice");
    this.started = true;
    const cands = [...(this.opts.dir ? discover(this.opts.dir, this.log) : []), ...(this.opts.paths ?? []).map((p) => path.resolve(p))];
    const launched = await Promise.all(cands.map(async (file) => {
      const p = new Plugin(this, file, path.basename(file));
      try {
        return { p, inst: await this.firstLaunch(p) };
      } catch (err) {
        this.log.warn("skipping plugin candidate", { path: file, error: (err as Error).message });
        this.emit({ plugin: file, kind: "skipped", error: err as Error });
        return undefined;
      }
    }));
    const winners = new Map<string, { p: Plugin; inst: Instance }>();
    for (const l of launched) {
      if (!l) continue;
      const prev = winners.get(l.inst.desc.name);
      if (prev) {
        this.log.warn("skipping plugin: name clash", { name: l.inst.desc.name, keeping: prev.p.path, skipping: l.p.path });
        await l.inst.proc.kill();
        continue;
      }
      winners.set(l.inst.desc.name, l);
    }
    if (this.closed) {
      await Promise.all([...winners.values()].map((w) => w.inst.proc.kill()));
      throw new Error("hostsdk: the Manager was closed during start");
    }
    const errs: Error[] = [];
    await Promise.all([...winners.values()].map(async ({ p, inst }) => {
      this._plugins.push(p);
      p.adopt(inst.desc);
      try {
        await this.bringUp(p, inst);
        if (!p.install(inst)) await inst.proc.kill();
      } catch (err) {
        await inst.proc.kill();
        p.fail(err as Error);
        errs.push(err as Error);
      }
    }));
    this._plugins.sort((a, b) => (a.name < b.name ? -1 : 1));
    if (errs.length) throw new AggregateError(errs, errs.map((e) => e.message).join("; "));
  }

  /** @internal Launches and describes a process for p. */
  async spawn(p: Plugin, name: string, prefixes: string[]): Promise<Instance> {
    const env = this.envFor(name, prefixes);
    const proc = await PluginProcess.launch({
      path: p.path, env, socketDir: this.socketDir, startTimeoutMs: this.opts.startTimeoutMs, log: this.log, stderr: p.stderr,
    });
    try {
      const desc = await unary<DescribeResponse>(proc.clients.plugin, "describe", { hostProtocolMinor: PROTOCOL_MINOR },
        { timeoutMs: this.opts.startTimeoutMs }).catch((e) => { throw fromServiceError(e, "Describe failed"); });
      if (!VALID_NAME.test(desc.name)) {
        throw new Error(`Describe gave the name ${JSON.stringify(desc.name)}; a plugin name must be 1-64 letters, digits, '.', '_' or '-' and start with a letter or digit`);
      }
      return { proc, desc, env, endpoints: [] };
    } catch (err) {
      await proc.kill();
      throw new HandshakeError(`${p.path}: ${(err as Error).message}`, { cause: err });
    }
  }

  /**
   * The first launch; when Describe shows the process should have had a
   * different environment (declared prefixes, pluginEnv under its name),
   * it is launched once more with it, so a first start and a restart see
   * the same variables.
   */
  private async firstLaunch(p: Plugin): Promise<Instance> {
    const inst = await this.spawn(p, p.name, []);
    const { name, envPrefixes } = inst.desc;
    if (sameEnv(inst.env, this.envFor(name, envPrefixes))) return inst;
    this.log.debug("relaunching plugin with the environment it declared", { plugin: name, envPrefixes });
    await inst.proc.kill();
    const again = await this.spawn(p, name, envPrefixes);
    if (again.desc.name !== name) {
      await again.proc.kill();
      throw new Error(`${p.path} described itself as "${name}", then as "${again.desc.name}" when relaunched`);
    }
    return again;
  }

  /** @internal A fresh process for a plugin that ran before. */
  async relaunch(p: Plugin): Promise<Instance> {
    const inst = await this.spawn(p, p.name, p.describe?.envPrefixes ?? []);
    if (inst.desc.name !== p.name) {
      await inst.proc.kill();
      throw new Error(`${p.path} now describes itself as "${inst.desc.name}" instead of "${p.name}"; restart the host to load it under its new name`);
    }
    return inst;
  }

  /** @internal Configures a described instance and connects its platform. */
  async bringUp(_p: Plugin, inst: Instance): Promise<void> {
    const name = inst.desc.name;
    const dataDir = this.dataDirFor(name);
    const hostInfo: HostInfoInit = {
      name: "hostsdk-node",
      optionalRpcs: optionalRpcs(this.opts.host),
      ...this.opts.hostInfo,
    };
    hostInfo.protocolMinor ||= PROTOCOL_MINOR;
    inst.host = new HostServer(this.opts.host, this.log, this.opts.heartbeatMs);
    const id = inst.proc.broker.nextId();
    inst.hostServer = await inst.proc.broker.accept(id, (s) => inst.host!.register(s));
    const t = this.opts.startTimeoutMs;
    const cfg = Buffer.from(JSON.stringify(this.opts.config?.[name] ?? {}));
    const resp = await unary<ConfigureResponse>(inst.proc.clients.plugin, "configure", {
      configJson: cfg, dataDir, hostBrokerId: id, logLevel: this.opts.logLevel ?? "", host: hostInfo,
    }, { timeoutMs: t }).catch((e) => {
      throw new Error(`plugin "${name}" refused its configuration (fix its section of the host config): ${e.details ?? e.message}`);
    });
    for (const w of resp.warnings) this.log.warn("plugin configuration warning", { plugin: name, warning: w });
    if (inst.desc.capabilities.includes("CAPABILITY_PLATFORM")) {
      if (inst.desc.protocolMinor >= 2) {
        const platform = inst.proc.clients.platform as unknown as { sendStream(): never; send: unknown };
        inst.sends = new CallStreamClient("Send", () => platform.sendStream(),
          (req, opts) => unary<Record<string, unknown>>(inst.proc.clients.platform, "send", req, opts).catch((e) => { throw fromServiceError(e, "Send"); }));
      }
      const cr = await unary<{ endpoints: string[] }>(inst.proc.clients.platform, "connect", {}, { timeoutMs: t }).catch((e) => {
        throw new Error(`plugin "${name}" could not connect its platform: ${e.details ?? e.message}`);
      });
      inst.endpoints = cr.endpoints;
    }
  }

  private dataDirFor(name: string): string {
    let root = this.opts.dataDir;
    if (!root) {
      this.tmpDataDir ??= fs.mkdtempSync(path.join(os.tmpdir(), "hostsdk-data-"));
      root = this.tmpDataDir;
    }
    const dir = path.join(root, name);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  private envFor(name: string, prefixes: string[]): Record<string, string> {
    return buildEnv(process.env, this.opts.envAllow ?? [], prefixes, this.opts.pluginEnv?.[name], this.opts.logLevel);
  }

  /** @internal The delay before restart number attempt+1. */
  backoff(attempt: number): number {
    const r = this.opts.restart;
    const d = Math.min(r.baseBackoffMs * 2 ** attempt, r.maxBackoffMs);
    return d / 2 + Math.random() * (d / 2);
  }

  /** @internal */
  emit(e: PluginEvent): void {
    if (e.kind === "ready") this.routes.clear();
    this.opts.onEvent?.(e);
  }

  /**
   * The tools of every ready plugin with a toolset, each with toolset set
   * to the plugin's name; remembers which plugin serves which for callTool.
   */
  async tools(opts?: CallOpts): Promise<ToolDefinition[]> {
    const all: ToolDefinition[] = [];
    const routes = new Map<string, Plugin>();
    for (const p of this._plugins) {
      const ts = p.toolset();
      if (!ts || p.state !== "ready") continue;
      for (const td of await ts.listTools(opts)) {
        if (routes.has(td.name)) {
          this.log.warn("two plugins offer the same tool; using the first", { tool: td.name, using: routes.get(td.name)!.name, ignoring: p.name });
          continue;
        }
        routes.set(td.name, p);
        all.push({ ...td, toolset: p.name });
      }
    }
    this.routes = routes;
    return all;
  }

  /** Runs req.name on the plugin that offers it. */
  async callTool(req: CallToolRequestInit, onProgress?: (p: ToolProgress) => void, opts?: CallOpts): Promise<ToolResult> {
    const name = req.name ?? "";
    let p = this.routes.get(name);
    if (!p) {
      await this.tools(opts).catch((e) => this.log.warn("listing tools to route a call", { tool: name, error: String(e) }));
      p = this.routes.get(name);
    }
    const ts = p?.toolset();
    if (!ts) throw new CallError(Code.NOT_FOUND, `no plugin offers tool "${name}" (known: ${[...this.routes.keys()].sort().join(", ") || "none"})`);
    return ts.callTool(req, onProgress, opts);
  }

  /**
   * Stops every plugin in parallel: Disconnect, Drain, a ShutdownNotice,
   * go-plugin's Shutdown, then kill. Idempotent; rejects listing the
   * plugins that did not stop cleanly (they are stopped all the same).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const errs = (await Promise.all(this._plugins.map((p) => p.stop()))).flat();
    fs.rmSync(this.socketDir, { recursive: true, force: true });
    if (this.tmpDataDir) fs.rmSync(this.tmpDataDir, { recursive: true, force: true });
    if (errs.length) throw new AggregateError(errs, errs.map((e) => e.message).join("; "));
  }
}

/**
 * The plugin candidates in dir: regular executable files, sorted; what is
 * skipped is logged with the reason.
 */
export function discover(dir: string, log: Logger = nullLogger): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, e.name);
    if (e.name.startsWith(".")) continue;
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
    } catch (err) {
      log.warn("skipping plugin candidate", { path: file, error: (err as Error).message });
      continue;
    }
    if (!st.isFile()) continue;
    if ((st.mode & 0o111) === 0) {
      log.debug("skipping a file that is not executable", { path: file });
      continue;
    }
    out.push(file);
  }
  return out.sort();
}
