// The conformance kit (proto/agentplugin/v1/host-rules.json): the
// host-side rules the Go and Python host libraries are checked against too.
// A constant of this library that says something else fails here; change
// the rule in the kit, then here. And the contract's message types,
// generated from the .proto (src/gen), checked against the objects this
// library's proto loader really decodes.
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

// The contract's message types are generated from the .proto
// (src/gen/agentplugin/v1/agentplugin.ts, by cmd/protoc-gen-a2a-ts; make
// proto-check fails when the committed file is not what the generator
// writes). What is left to check here is that they describe what this
// library really hands to host code: the objects its proto-loader (with the
// options of src/proto.ts) decodes, after its own seam (src/convert.ts). A
// loader option that changes a shape (keepCase, longs, enums, bytes,
// defaults, oneofs) fails here.

// parseGenerated reads the generated file: its interfaces (name -> fields,
// each with its TypeScript type and whether it is optional) and its enum
// unions (name -> value names).
function parseGenerated() {
  const src = fs.readFileSync(path.resolve(here, "../src/gen/agentplugin/v1/agentplugin.ts"), "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  const interfaces = new Map();
  for (const m of src.matchAll(/^export interface (\w+) \{\n((?:  .*\n|\s*\n)*)\}/gm)) {
    const fields = new Map();
    for (const f of m[2].matchAll(/^\s*(\w+)(\??): (.+);$/gm)) fields.set(f[1], { optional: f[2] === "?", type: f[3] });
    interfaces.set(m[1], fields);
  }
  assert.equal(interfaces.size, [...src.matchAll(/^export interface /gm)].length, "the test's parser skipped interfaces of the generated file");
  const enums = new Map();
  for (const m of src.matchAll(/export type (\w+) = ("[A-Z0-9_]+"(?: \| "[A-Z0-9_]+")*);/g)) {
    enums.set(m[1], [...m[2].matchAll(/"(\w+)"/g)].map((v) => v[1]));
  }
  return { interfaces, enums };
}

// oneofsOf: the oneof fields of a generated interface (a union of the names
// of its other fields), each with its members.
function oneofsOf(fields) {
  const out = new Map();
  for (const [name, f] of fields) {
    const members = f.type.split(" | ").map((t) => /^"(\w+)"$/.exec(t)?.[1]);
    if (members.every((m) => m !== undefined && fields.has(m))) out.set(name, members);
  }
  return out;
}

// checkShape asserts that value is exactly what the generated type says:
// no field the type lacks, every required field present, each of its type.
function checkShape(gen, value, type, where, seen) {
  const fields = gen.interfaces.get(type);
  assert.ok(fields, `${where}: the generated file has no type ${type}`);
  seen.add(type);
  assert.ok(value !== null && typeof value === "object" && !Array.isArray(value), `${where}: a ${type} decodes to ${JSON.stringify(value)}, not an object`);
  for (const k of Object.keys(value)) assert.ok(fields.has(k), `${where}: the decoded object has a field "${k}" that the generated ${type} lacks`);
  for (const [name, f] of fields) {
    if (value[name] === undefined) {
      assert.ok(f.optional, `${where}.${name}: the generated ${type} says it is always there; the decoded object lacks it`);
      continue;
    }
    checkValue(gen, value[name], f.type, `${where}.${name}`, seen);
  }
  for (const [oneof, members] of oneofsOf(fields)) {
    const set = members.filter((m) => value[m] !== undefined);
    assert.ok(set.length <= 1, `${where}: several members of the oneof ${oneof} are set: ${set}`);
    assert.equal(value[oneof], set[0], `${where}.${oneof}: says which member of the oneof is set`);
  }
}

function isJson(v) {
  if (v === null || ["string", "number", "boolean"].includes(typeof v)) return true;
  if (Array.isArray(v)) return v.every(isJson);
  return typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype && Object.values(v).every(isJson);
}

function checkValue(gen, v, type, where, seen) {
  if (type.endsWith(" | null")) {
    if (v !== null) checkValue(gen, v, type.slice(0, -" | null".length), where, seen);
    return;
  }
  const array = /^\(?(.+?)\)?\[\]$/.exec(type);
  if (array) {
    assert.ok(Array.isArray(v), `${where}: ${JSON.stringify(v)} is not the array (${type}) the generated type says`);
    v.forEach((e, i) => checkValue(gen, e, array[1], `${where}[${i}]`, seen));
    return;
  }
  const map = /^\{ \[key: string\]: (.+) \}$/.exec(type);
  if (map) {
    assert.ok(v !== null && typeof v === "object", `${where}: not the map ${type}`);
    for (const [k, e] of Object.entries(v)) checkValue(gen, e, map[1], `${where}[${k}]`, seen);
    return;
  }
  switch (type) {
    case "string": case "number": case "boolean":
      assert.equal(typeof v, type, `${where}: ${JSON.stringify(v)} is a ${typeof v}; the generated type says ${type}`);
      return;
    case "Buffer":
      assert.ok(Buffer.isBuffer(v), `${where}: ${JSON.stringify(v)} is no Buffer`);
      return;
    case "JsonValue":
      assert.ok(isJson(v), `${where}: ${JSON.stringify(v)} is no JSON value`);
      return;
    case "JsonObject":
      assert.ok(isJson(v) && v !== null && typeof v === "object" && !Array.isArray(v), `${where}: ${JSON.stringify(v)} is no JSON object`);
      return;
  }
  const literals = type.split(" | ").map((t) => /^"(\w+)"$/.exec(t)?.[1]);
  if (literals.every((l) => l !== undefined)) {
    assert.ok(literals.includes(v), `${where}: ${JSON.stringify(v)} is none of ${type}`);
    return;
  }
  if (gen.enums.has(type)) {
    assert.ok(gen.enums.get(type).includes(v), `${where}: ${JSON.stringify(v)} is no value name of the enum ${type}`);
    return;
  }
  checkShape(gen, v, type, where, seen);
}

// sample is an object to encode as the message desc: with every field set
// to a value that is not its default (the oneofs' member number `pick`),
// or, when empty, no field at all.
function sample(def, gen, full, pick = 0, depth = 0) {
  return (desc) => {
    const msg = def[`agentplugin.v1.${desc}`].type;
    const out = {};
    if (!full || depth > 4) return out;
    const skip = new Set();
    for (const members of oneofsOf(gen.interfaces.get(desc)).values()) {
      for (const [i, m] of members.entries()) if (i !== pick % members.length) skip.add(m);
    }
    for (const f of msg.field) {
      if (skip.has(f.name)) continue;
      let v;
      switch (f.type) {
        case "TYPE_STRING": v = `${f.name}-value`; break;
        case "TYPE_BOOL": v = true; break;
        case "TYPE_BYTES": v = Buffer.from(f.name); break;
        case "TYPE_DOUBLE": case "TYPE_FLOAT": v = 0.5; break;
        case "TYPE_INT64": case "TYPE_UINT64": case "TYPE_SINT64": case "TYPE_FIXED64": case "TYPE_SFIXED64": v = 2 ** 40 + 1; break;
        case "TYPE_ENUM": v = def[def[f.typeName] ? f.typeName : `agentplugin.v1.${f.typeName}`].type.value[1].name; break;
        case "TYPE_MESSAGE":
          if (f.typeName === "google.protobuf.Struct") v = { fields: { k: { stringValue: "v" }, n: { listValue: { values: [{ numberValue: 1 }, { nullValue: "NULL_VALUE" }] } } } };
          else if (f.typeName === "google.protobuf.Value") v = { structValue: { fields: { a: { boolValue: true } } } };
          else v = sample(def, gen, full, pick, depth + 1)(f.typeName.replace(/^agentplugin\.v1\./, ""));
          break;
        default:
          assert.ok(/^TYPE_(U?INT|SINT|S?FIXED)32$/.test(f.type), `${desc}.${f.name} has proto type ${f.type}, which this test does not sample yet`);
          v = 7;
      }
      out[f.name] = f.label === "LABEL_REPEATED" ? [v] : v;
    }
    return out;
  };
}

test("the generated message types are exactly what this library's proto loader decodes", async () => {
  const { services } = await import("../dist/proto.js");
  const { handleMessageFromPb } = await import("../dist/convert.js");
  const gen = parseGenerated();
  assert.ok(gen.interfaces.size > 40 && gen.enums.size >= 4, `the generated file parsed to ${gen.interfaces.size} interfaces and ${gen.enums.size} enums; the parser no longer reads it`);
  // The descriptors only (names and proto types of the fields); the shapes
  // come from the library's own loader below.
  const def = protoLoader.loadSync(CONTRACT_PROTO, {});
  // What host code gets of a decoded message: the library's seam converts
  // HandleMessageRequest (its Struct and Value fields); every other message
  // reaches host code as the loader decodes it.
  const seam = { HandleMessageRequest: handleMessageFromPb };
  const seen = new Set();
  let checked = 0;
  for (const name of ["PluginService", "PlatformAdapterService", "ToolsetService", "HostService"]) {
    for (const [method, m] of Object.entries(services()[name].service)) {
      for (const [type, ser, des] of [
        [m.requestType.type.name, m.requestSerialize, m.requestDeserialize],
        [m.responseType.type.name, m.responseSerialize, m.responseDeserialize],
      ]) {
        for (const [what, input] of [["empty", sample(def, gen, false)(type)], ["full", sample(def, gen, true, 0)(type)], ["full, second oneof members", sample(def, gen, true, 1)(type)]]) {
          const decoded = des(ser(input));
          const value = seam[type] ? seam[type](decoded) : decoded;
          checkShape(gen, value, type, `${name}.${method} ${type} (${what})`, seen);
          checked++;
        }
      }
    }
  }
  assert.ok(checked > 100, `only ${checked} messages checked`);
  // Every generated message type was reached (an Init type is what may be
  // given, never decoded).
  const missed = [...gen.interfaces.keys()].filter((t) => !t.endsWith("Init") && !seen.has(t));
  assert.deepEqual(missed, [], "generated message types no decoded sample reached");
  // The seam's JSON is the JSON that was sent.
  const hm = services().HostService.service.HandleMessage;
  const req = handleMessageFromPb(hm.requestDeserialize(hm.requestSerialize(sample(def, gen, true, 3)("HandleMessageRequest"))));
  assert.deepEqual(req.metadata, { k: "v", n: [1, null] });
  assert.deepEqual(req.parts[0].data, { a: true });
  assert.equal(req.parts[0].content, "data");
});
