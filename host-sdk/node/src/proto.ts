// The contract's .proto and go-plugin's wire services, loaded at run time
// with @grpc/proto-loader (decision: no generated stubs to keep in step; the
// package ships the .proto it loads, copied from proto/ at build time).
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fileURLToPath } from "node:url";

const options: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

const contractFile = fileURLToPath(new URL("./proto/agentplugin/v1/agentplugin.proto", import.meta.url));
const goPluginFile = fileURLToPath(new URL("./proto/goplugin.proto", import.meta.url));

/** The contract's .proto file this library loads. */
export const CONTRACT_PROTO = contractFile;

type ServiceCtor = grpc.ServiceClientConstructor;

interface Loaded {
  PluginService: ServiceCtor;
  PlatformAdapterService: ServiceCtor;
  ToolsetService: ServiceCtor;
  HostService: ServiceCtor;
  GRPCBroker: ServiceCtor;
  GRPCController: ServiceCtor;
  GRPCStdio: ServiceCtor;
}

let loaded: Loaded | undefined;

/** The service constructors (and definitions, as .service) of both protos. */
export function services(): Loaded {
  if (loaded) return loaded;
  const def = protoLoader.loadSync([contractFile, goPluginFile], options);
  const root = grpc.loadPackageDefinition(def) as unknown as {
    agentplugin: { v1: Record<string, ServiceCtor> };
    plugin: Record<string, ServiceCtor>;
  };
  const v1 = root.agentplugin.v1;
  loaded = {
    PluginService: v1.PluginService,
    PlatformAdapterService: v1.PlatformAdapterService,
    ToolsetService: v1.ToolsetService,
    HostService: v1.HostService,
    GRPCBroker: root.plugin.GRPCBroker,
    GRPCController: root.plugin.GRPCController,
    GRPCStdio: root.plugin.GRPCStdio,
  };
  return loaded;
}

/** MaxMessageBytes of the contract: 64 MiB each way (files travel inline). */
export const MAX_MESSAGE_BYTES = 64 << 20;

/** Channel options every connection of the contract uses. */
export const channelOptions: grpc.ChannelOptions = {
  "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
  "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
};

/** Promisifies a unary call of a grpc-js client, with an optional deadline/signal. */
export function unary<Res>(client: grpc.Client, method: string, req: unknown, opts: CallOpts = {}): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    const callOpts: grpc.CallOptions = {};
    if (opts.timeoutMs !== undefined && opts.timeoutMs > 0) callOpts.deadline = Date.now() + opts.timeoutMs;
    const fn = (client as unknown as Record<string, Function>)[method];
    const call = fn.call(client, req, new grpc.Metadata(), callOpts, (err: grpc.ServiceError | null, res: Res) => {
      opts.signal?.removeEventListener("abort", onAbort);
      if (err) reject(err);
      else resolve(res);
    }) as grpc.ClientUnaryCall;
    const onAbort = () => call.cancel();
    if (opts.signal?.aborted) call.cancel();
    else opts.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** How long a call may take and who may cancel it. */
export interface CallOpts {
  /** Deadline in milliseconds from now; none when absent or <= 0. */
  timeoutMs?: number;
  /** Aborting cancels the call (it fails with CANCELLED). */
  signal?: AbortSignal;
}
