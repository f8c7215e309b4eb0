// Names this plugin is known by in OpenClaw, and where its files are.
import fs from "node:fs";
import { fileURLToPath } from "node:url";

/** The OpenClaw plugin id (plugins.entries.<id>). */
export const PLUGIN_ID = "a2a-plugin";
/**
 * The channel id (channels.<id>). Not "a2a": that is OpenClaw's bundled A2A
 * channel, which users switch off (channels.a2a.enabled: false) when they
 * install this one.
 */
export const CHANNEL_ID = "a2a-plugin";
/** The default OpenClaw account of the channel. */
export const ACCOUNT_ID = "default";

/** Go's names for Node's platforms and CPUs, as the release lays out bin/. */
const GOOS: Record<string, string> = { linux: "linux", darwin: "darwin", win32: "windows" };
const GOARCH: Record<string, string> = { x64: "amd64", arm64: "arm64" };

/**
 * The plugin binary for this machine. A release package carries one per
 * target, bin/<goos>-<goarch>/a2a-plugin[.exe] (make release); a package
 * built from a checkout (make openclaw-plugin) carries this machine's as
 * bin/a2a-plugin. When neither exists the service's launch fails with a
 * message naming the path it looked for.
 */
export function binaryFor(platform: string, arch: string, root: URL = new URL("../", import.meta.url)): string {
  const exe = platform === "win32" ? ".exe" : "";
  const goos = GOOS[platform], goarch = GOARCH[arch];
  if (goos && goarch) {
    const p = fileURLToPath(new URL(`bin/${goos}-${goarch}/a2a-plugin${exe}`, root));
    if (fs.existsSync(p)) return p;
  }
  return fileURLToPath(new URL(`bin/a2a-plugin${exe}`, root));
}

/** The plugin binary this machine runs (binaryFor this platform and CPU). */
export const BINARY = binaryFor(process.platform, process.arch);
/** The tool definitions generated from the binary's ListTools at build time. */
export const TOOLS_FILE = fileURLToPath(new URL("../tools.json", import.meta.url));
