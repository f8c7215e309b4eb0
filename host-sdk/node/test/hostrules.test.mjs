// The conformance kit (proto/agentplugin/v1/host-rules.json): the
// host-side rules the Go and Python host libraries are checked against too.
// A constant of this library that says something else fails here; change
// the rule in the kit, then here. And the contract's message shapes in
// src/contract.ts, written by hand, checked field by field and enum by enum
// against the .proto this library loads, so a proto change that the types
// miss fails here too.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import protoLoader from "@grpc/proto-loader";
import {
  BASE_ENV_ALLOW, CONTRACT_PROTO, CallError, Code, DEFAULT_HEARTBEAT_MS, ENV_LOG_LEVEL, HANDSHAKE,
  MANAGER_DEFAULTS, MAX_MESSAGE_BYTES, PLUGIN_NAMES, PROTOCOL_MAJOR, UnimplementedError,
} from "../dist/index.js";
import { CALL_STREAM_MAX_BYTES, MAX_DEAD_STREAMS } from "../dist/callstream.js";
import { CORE_PROTOCOL_VERSION } from "../dist/handshake.js";
import { toStatus } from "../dist/errors.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const kit = JSON.parse(fs.readFileSync(path.resolve(here, "../../../proto/agentplugin/v1/host-rules.json"), "utf8"));

test("the handshake, the plugin names, the environment allowlist and the message size agree with the kit", () => {
  const h = kit.handshake;
  assert.equal(PROTOCOL_MAJOR, h.protocolMajor, "handshake.protocolMajor");
  assert.equal(HANDSHAKE.protocolVersion, h.protocolMajor, "handshake.protocolMajor (HANDSHAKE)");
  assert.equal(CORE_PROTOCOL_VERSION, h.coreProtocolVersion, "handshake.coreProtocolVersion");
  assert.equal(HANDSHAKE.magicCookieKey, h.magicCookieKey, "handshake.magicCookieKey");
  assert.equal(HANDSHAKE.magicCookieValue, h.magicCookieValue, "handshake.magicCookieValue");
  assert.equal(ENV_LOG_LEVEL, h.envLogLevel, "handshake.envLogLevel");
  assert.deepEqual({ ...PLUGIN_NAMES }, kit.pluginNames, "pluginNames");
  assert.equal(MAX_MESSAGE_BYTES, kit.maxMessageBytes, "maxMessageBytes");
  assert.deepEqual([...BASE_ENV_ALLOW], kit.envAllow, "envAllow");
});

test("the call-stream thresholds agree with the kit", () => {
  assert.equal(CALL_STREAM_MAX_BYTES, kit.callStream.maxRequestBytes, "callStream.maxRequestBytes");
  assert.equal(MAX_DEAD_STREAMS, kit.callStream.maxDeadStreams, "callStream.maxDeadStreams");
});

test("the Manager's defaults agree with the kit", () => {
  assert.deepEqual(MANAGER_DEFAULTS, kit.defaults, "defaults");
  assert.equal(DEFAULT_HEARTBEAT_MS, kit.defaults.heartbeatMs, "defaults.heartbeatMs (DEFAULT_HEARTBEAT_MS)");
});

test("the gRPC codes of the kit's error kinds agree with this library's Code and errors", () => {
  // This library has no class per kind: a CallError carries the code. The
  // kinds it does name must carry the kit's code.
  for (const k of kit.errors.kinds) {
    assert.equal(Code[k.code], k.number, `errors.kinds ${k.kind}: Code.${k.code}`);
    assert.equal(new CallError(Code[k.code], "m").code, k.number, `errors.kinds ${k.kind}: CallError`);
  }
  const kind = (name) => Code[kit.errors.kinds.find((k) => k.kind === name).code];
  assert.equal(new UnimplementedError("Complete").code, kind("unimplemented"), "errors.kinds unimplemented: UnimplementedError");
  const timeout = new Error("timed out");
  timeout.name = "TimeoutError";
  assert.equal(toStatus(timeout).code, kind("deadlineExceeded"), "errors.kinds deadlineExceeded: a TimeoutError a handler throws");
});

// parseContractTypes reads src/contract.ts: its interfaces' fields (name ->
// TypeScript type as written) and its string-union types' members.
function parseContractTypes() {
  const src = fs.readFileSync(path.resolve(here, "../src/contract.ts"), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  const interfaces = new Map();
  for (const m of src.matchAll(/export interface (\w+)\s*\{([\s\S]*?)\n\}/g)) {
    interfaces.set(m[1], new Map([...m[2].matchAll(/^\s*(\w+)\??\s*:\s*([^;]+);/gm)].map((f) => [f[1], f[2].trim()])));
  }
  const unions = new Map();
  for (const m of src.matchAll(/export type (\w+)\s*=([\s\S]*?);/g)) {
    const members = [...m[2].matchAll(/"([A-Z0-9_]+)"/g)].map((s) => s[1]);
    if (members.length > 0) unions.set(m[1], members);
  }
  return { interfaces, unions };
}

// tsType is the TypeScript type a proto field decodes to with this
// library's proto-loader options (src/proto.ts): lowerCamelCase names, enums
// as their names, 64-bit integers as numbers, bytes as Buffers, Struct and
// Value as plain JSON (src/struct.ts converts at the seam).
function tsType(f) {
  const last = f.typeName.split(".").pop();
  const scalar = {
    TYPE_STRING: "string", TYPE_BOOL: "boolean", TYPE_BYTES: "Buffer",
    TYPE_MESSAGE: { Struct: "JsonObject", Value: "JsonValue" }[last] ?? last, TYPE_ENUM: last,
  }[f.type] ?? (/^TYPE_(U?INT|SINT|S?FIXED)(32|64)$|^TYPE_(DOUBLE|FLOAT)$/.test(f.type) ? "number" : undefined);
  assert.ok(scalar, `field ${f.name} has proto type ${f.type}, which this test does not map to TypeScript yet`);
  return f.label === "LABEL_REPEATED" ? `${scalar}[]` : scalar;
}

test("every message and enum type of contract.ts has exactly the fields and values of the .proto", () => {
  const def = protoLoader.loadSync(CONTRACT_PROTO, { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true });
  const { interfaces, unions } = parseContractTypes();
  assert.ok(interfaces.size > 20 && unions.size >= 4, `src/contract.ts parsed to ${interfaces.size} interfaces and ${unions.size} enums; the parser no longer reads it`);
  for (const [name, fields] of interfaces) {
    const msg = def[`agentplugin.v1.${name}`];
    assert.ok(msg?.format?.endsWith("DescriptorProto") && !msg.format.includes("Enum"),
      `contract.ts interface ${name} is no message of agentplugin.proto: name it after the message it is`);
    const want = Object.fromEntries(msg.type.field.map((f) => [f.name, tsType(f)]));
    assert.deepEqual(Object.fromEntries(fields), want, `contract.ts interface ${name}: its fields (name: type) are not the proto message's`);
  }
  for (const [name, values] of unions) {
    const en = def[`agentplugin.v1.${name}`];
    assert.ok(en?.format?.includes("EnumDescriptorProto"), `contract.ts type ${name} is no enum of agentplugin.proto`);
    assert.deepEqual([...values].sort(), en.type.value.map((v) => v.name).sort(), `contract.ts type ${name}: its values are not the proto enum's`);
  }
  // Every enum of the proto has its type (messages a host never builds or
  // reads itself may be left out: the proto loader's objects carry them).
  for (const [full, d] of Object.entries(def)) {
    if (full.startsWith("agentplugin.v1.") && d.format?.includes("EnumDescriptorProto")) {
      assert.ok(unions.has(full.slice("agentplugin.v1.".length)), `agentplugin.proto's enum ${full} has no type in contract.ts`);
    }
  }
});
