// go-plugin's GRPCBroker, host side: one StartStream per plugin connection.
// To serve a service to the plugin under broker id N, the host listens on a
// fresh Unix socket in the private socket directory and announces
// ConnInfo{service_id: N, network: "unix", address} on the stream; the
// plugin dials it when its code asks for id N.
import * as grpc from "@grpc/grpc-js";
import path from "node:path";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import type { Logger } from "./log.js";
import { channelOptions, MAX_MESSAGE_BYTES } from "./proto.js";

export class Broker {
  private stream: grpc.ClientDuplexStream<Record<string, unknown>, Record<string, unknown>> | undefined;
  private next = 0;
  private readonly servers = new Set<grpc.Server>();
  private closed = false;

  constructor(
    private readonly client: grpc.Client,
    private readonly socketDir: string,
    private readonly log: Logger,
  ) {}

  /** Opens the broker stream (go-plugin's client does the same at connect). */
  start(): void {
    const s = (this.client as unknown as { startStream(): grpc.ClientDuplexStream<Record<string, unknown>, Record<string, unknown>> }).startStream();
    s.on("data", (info: Record<string, unknown>) => {
      // The plugin announces services it accepts on; a host of this
      // contract dials none, so they are only logged.
      this.log.debug("plugin announced a broker service", { id: info.serviceId, address: info.address });
    });
    s.on("error", (err: grpc.ServiceError) => {
      if (!this.closed && err.code !== grpc.status.CANCELLED) this.log.debug("broker stream ended", { error: err.message });
    });
    s.on("end", () => {});
    this.stream = s;
  }

  /** A fresh broker id. */
  nextId(): number {
    return ++this.next;
  }

  /**
   * Serves what register adds on a new socket under broker id id and tells
   * the plugin where; returns the server (stop it with stop()).
   */
  async accept(id: number, register: (server: grpc.Server) => void): Promise<grpc.Server> {
    if (!this.stream || this.closed) throw new Error("the broker stream is not open (the plugin connection is closed)");
    const server = new grpc.Server({
      ...channelOptions,
      "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
    });
    register(server);
    const sock = path.join(this.socketDir, `host-${id}-${randomBytes(4).toString("hex")}.sock`);
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    fs.chmodSync(sock, 0o600);
    this.servers.add(server);
    this.stream.write({ serviceId: id, network: "unix", address: sock });
    return server;
  }

  /** Stops one server accepted earlier. */
  stop(server: grpc.Server): void {
    this.servers.delete(server);
    server.forceShutdown();
  }

  /** Ends the stream and every served service. */
  close(): void {
    this.closed = true;
    for (const s of this.servers) s.forceShutdown();
    this.servers.clear();
    this.stream?.cancel();
  }
}
