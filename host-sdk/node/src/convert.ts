// Conversions at the seam between proto-loader's objects and the contract
// types (src/gen, re-exported by contract.ts): the one place where
// google.protobuf.Struct and Value fields become plain JSON and back. What
// a decoding returns is exactly the generated type: the loader's object
// with its Struct and Value fields converted, nothing dropped or added.
import type {
  ArtifactInit, HandleMessageRequest, Part, PartInit, RecordDelegationRequest, SendRequestInit, ToolDefinitionInit,
} from "./contract.js";
import { jsonToStruct, jsonToValue, structToJson, valueToJson, type PbStruct, type PbValue } from "./struct.js";

type Decoded = Record<string, unknown>;

export function partFromPb(p: Decoded): Part {
  const out: Part = {
    mediaType: p.mediaType as string,
    filename: p.filename as string,
    metadata: p.metadata ? structToJson(p.metadata as PbStruct) : null,
  };
  switch (p.content) {
    case "text": out.text = p.text as string; break;
    case "raw": out.raw = p.raw as Buffer; break;
    case "url": out.url = p.url as string; break;
    case "data": out.data = valueToJson(p.data as PbValue); break;
  }
  if (p.content !== undefined) out.content = p.content as Part["content"];
  return out;
}

export function partToPb(p: PartInit): Decoded {
  const out: Decoded = { mediaType: p.mediaType ?? "", filename: p.filename ?? "" };
  if (p.text !== undefined) out.text = p.text;
  else if (p.raw !== undefined) out.raw = p.raw;
  else if (p.url !== undefined) out.url = p.url;
  else if (p.data !== undefined) out.data = jsonToValue(p.data);
  if (p.metadata) out.metadata = jsonToStruct(p.metadata);
  return out;
}

export function handleMessageFromPb(r: Decoded): HandleMessageRequest {
  return {
    ...(r as unknown as HandleMessageRequest),
    parts: ((r.parts as Decoded[]) ?? []).map(partFromPb),
    metadata: r.metadata ? structToJson(r.metadata as PbStruct) : null,
  };
}

function artifactToPb(a: ArtifactInit): Decoded {
  return {
    artifactId: a.artifactId ?? "", name: a.name ?? "", description: a.description ?? "",
    parts: (a.parts ?? []).map(partToPb), append: a.append ?? false, lastChunk: a.lastChunk ?? false,
    metadata: jsonToStruct(a.metadata ?? undefined),
  };
}

export function sendToPb(s: SendRequestInit): Decoded {
  return {
    platform: s.platform ?? "", chatId: s.chatId ?? "", taskId: s.taskId ?? "", kind: s.kind ?? "SEND_KIND_UNSPECIFIED",
    text: s.text ?? "", parts: (s.parts ?? []).map(partToPb), artifact: s.artifact ? artifactToPb(s.artifact) : undefined,
    metadata: jsonToStruct(s.metadata ?? undefined), endsTurn: s.endsTurn ?? false, agentId: s.agentId ?? "",
  };
}

export function toolToPb(t: ToolDefinitionInit): Decoded {
  return {
    name: t.name ?? "", description: t.description ?? "", parametersJsonSchema: t.parametersJsonSchema ?? "",
    toolset: t.toolset ?? "", tags: t.tags ?? [],
  };
}

export function recordDelegationFromPb(r: Decoded): RecordDelegationRequest {
  return r as unknown as RecordDelegationRequest;
}

/** A rough upper bound of a request's encoded size, for the call-stream size limit. */
export function approxSize(s: SendRequestInit): number {
  let n = 64 + (s.text?.length ?? 0) * 3;
  const parts = [...(s.parts ?? []), ...(s.artifact?.parts ?? [])];
  for (const p of parts) n += (p.text?.length ?? 0) * 3 + (p.raw?.length ?? 0) + (p.url?.length ?? 0) + (p.data !== undefined ? JSON.stringify(p.data).length : 0);
  if (s.metadata) n += JSON.stringify(s.metadata).length;
  return n;
}
