// The logger a host hands the library, and the plugin's hclog lines.

/** Log levels, as go-plugin's hclog names them. */
export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";

/** Where the library logs; console-compatible. Fields are key/value pairs. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** A Logger that drops everything. */
export const nullLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A Logger writing one line per entry to stderr at or above level. */
export function consoleLogger(level: LogLevel = "info", prefix = "hostsdk"): Logger {
  const order: Record<LogLevel, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4 };
  const at = (l: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (order[l] < order[level]) return;
    const kv = fields ? Object.entries(fields).map(([k, v]) => ` ${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join("") : "";
    process.stderr.write(`${new Date().toISOString()} [${l.toUpperCase()}] ${prefix}: ${msg}${kv}\n`);
  };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/**
 * Renders one line a plugin wrote to stderr: an hclog JSON line becomes
 * "level: message k=v …" with its level; anything else comes back as is
 * with level undefined.
 */
export function readableLogLine(line: string): { text: string; level?: string; message?: string; fields?: Record<string, unknown> } {
  if (!line.startsWith("{")) return { text: line };
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(line);
  } catch {
    return { text: line };
  }
  if (typeof m["@message"] !== "string") return { text: line };
  const level = typeof m["@level"] === "string" ? (m["@level"] as string) : undefined;
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) if (!k.startsWith("@")) fields[k] = v;
  const kv = Object.keys(fields).sort().map((k) => ` ${k}=${typeof fields[k] === "string" ? fields[k] : JSON.stringify(fields[k])}`).join("");
  return { text: `${level ? level + ": " : ""}${m["@message"]}${kv}`, level, message: m["@message"] as string, fields };
}

/** Keeps the last lines a plugin wrote to stderr, for crash reports. */
export class LineRing {
  private lines: { seq: number; text: string; notable: boolean }[] = [];
  private seq = 0;
  constructor(private readonly size = 50) {}
  /** A position; lines added later are at or after it. */
  mark(): number {
    return this.seq;
  }
  add(text: string, notable: boolean): void {
    this.lines.push({ seq: this.seq++, text, notable });
    if (this.lines.length > this.size) this.lines.shift();
  }
  /** The last n lines (all when n <= 0), oldest first. */
  tail(n = 0): string[] {
    const all = this.lines.map((l) => l.text);
    return n > 0 ? all.slice(-n) : all;
  }
  /** The last n notable lines (warnings, errors, non-hclog text) since mark. */
  notableSince(mark: number, n: number): string[] {
    return this.lines.filter((l) => l.seq >= mark && l.notable).map((l) => l.text).slice(-n);
  }
}
