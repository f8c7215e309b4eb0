// Names this plugin is known by in OpenClaw, and where its files are.
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

/** The plugin binary shipped in the package (bin/a2a-plugin beside dist/). */
export const BINARY = fileURLToPath(new URL("../bin/a2a-plugin", import.meta.url));
/** The tool definitions generated from the binary's ListTools at build time. */
export const TOOLS_FILE = fileURLToPath(new URL("../tools.json", import.meta.url));
