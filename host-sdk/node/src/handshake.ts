// The go-plugin handshake: the line a plugin prints on stdout once it
// serves, and the environment a host launches it with.
import { HandshakeError } from "./errors.js";
import { HANDSHAKE } from "./contract.js";

/** go-plugin's own protocol version (the first field of the line). */
export const CORE_PROTOCOL_VERSION = 1;

/** What the handshake line says. */
export interface HandshakeLine {
  coreVersion: number;
  appVersion: number;
  network: string;
  address: string;
  protocol: string;
  /** Base64 (raw std) DER of the plugin's certificate under AutoMTLS; "" without. */
  serverCert: string;
}

/**
 * Parses "CORE|APP|NETWORK|ADDR|PROTOCOL|CERT" and checks it is a gRPC
 * plugin of our major.
 */
export function parseHandshake(line: string, path: string): HandshakeLine {
  const f = line.trim().split("|");
  if (f.length < 5) {
    throw new HandshakeError(`${path} printed ${JSON.stringify(line.slice(0, 200))} instead of a go-plugin handshake line (is it an agentplugin plugin?)`);
  }
  const h: HandshakeLine = {
    coreVersion: Number(f[0]),
    appVersion: Number(f[1]),
    network: f[2],
    address: f[3],
    protocol: f[4],
    serverCert: f[5] ?? "",
  };
  if (h.coreVersion !== CORE_PROTOCOL_VERSION) {
    throw new HandshakeError(`${path} speaks go-plugin core protocol ${f[0]}, this host ${CORE_PROTOCOL_VERSION}`);
  }
  if (h.appVersion !== HANDSHAKE.protocolVersion) {
    throw new HandshakeError(`${path} speaks agentplugin protocol major ${f[1]}, this host ${HANDSHAKE.protocolVersion}`);
  }
  if (h.protocol !== "grpc") {
    throw new HandshakeError(`${path} offers protocol ${JSON.stringify(h.protocol)}; agentplugin plugins speak grpc`);
  }
  if (h.network !== "unix" && h.network !== "tcp") {
    throw new HandshakeError(`${path} listens on network ${JSON.stringify(h.network)}; expected unix or tcp`);
  }
  return h;
}

/** The gRPC target of a handshake address. */
export function grpcTarget(network: string, address: string): string {
  return network === "unix" ? `unix://${address}` : address;
}

/** The variables go-plugin's server reads, for a plugin using socketDir. */
export function handshakeEnv(socketDir: string): Record<string, string> {
  return {
    [HANDSHAKE.magicCookieKey]: HANDSHAKE.magicCookieValue,
    PLUGIN_PROTOCOL_VERSIONS: String(HANDSHAKE.protocolVersion),
    PLUGIN_UNIX_SOCKET_DIR: socketDir,
    // Only used when a plugin listens on TCP (Windows); go-plugin's defaults.
    PLUGIN_MIN_PORT: "10000",
    PLUGIN_MAX_PORT: "25000",
  };
}
