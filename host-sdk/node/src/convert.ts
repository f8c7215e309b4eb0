// Conversions at the seam between proto-loader's decoded objects and the
// contract types of contract.ts.
import type {
  Artifact, HandleMessageRequest, JsonObject, Part, RecordDelegationRequest, SendRequest, ToolDefinition,
} from "./contract.js";
import { jsonToStruct, jsonToValue, structToJson, valueToJson, type PbStruct, type PbValue } from "./struct.js";

type Decoded = Record<string, unknown>;

export function partFromPb(p: Decoded): Part {
  const out: Part = {};
  switch (p.content) {
    case "text": out.text = p.text as string; break;
    case "raw": out.raw = p.raw as Buffer; break;
    case "url": out.url = p.url as string; break;
    case "data": out.data = valueToJson(p.data as PbValue); break;
  }
  if (p.mediaType) out.mediaType = p.mediaType as string;
  if (p.filename) out.filename = p.filename as string;
  if (p.metadata && Object.keys((p.metadata as PbStruct).fields ?? {}).length > 0) out.metadata = structToJson(p.metadata as PbStruct);
  return out;
}

export function partToPb(p: Part): Decoded {
  const out: Decoded = { mediaType: p.mediaType ?? "", filename: p.filename ?? "" };
  if (p.text !== undefined) out.text = p.text;
  else if (p.raw !== undefined) out.raw = p.raw;
  else if (p.url !== undefined) out.url = p.url;
  else if (p.data !== undefined) out.data = jsonToValue(p.data);
  if (p.metadata) out.metadata = jsonToStruct(p.metadata);
  return out;
}

function optStruct(s: unknown): JsonObject | undefined {
  if (!s) return undefined;
  return structToJson(s as PbStruct);
}

export function handleMessageFromPb(r: Decoded): HandleMessageRequest {
  return {
    platform: r.platform as string,
    chatId: r.chatId as string,
    sender: r.sender ? { id: (r.sender as Decoded).id as string, displayName: ((r.sender as Decoded).displayName as string) || undefined } : undefined,
    trustTier: r.trustTier as HandleMessageRequest["trustTier"],
    taskId: r.taskId as string,
    text: r.text as string,
    parts: ((r.parts as Decoded[]) ?? []).map(partFromPb),
    messageId: r.messageId as string,
    metadata: optStruct(r.metadata),
    unattended: Boolean(r.unattended),
    trace: r.trace ? { traceparent: (r.trace as Decoded).traceparent as string, tracestate: (r.trace as Decoded).tracestate as string } : undefined,
    referenceTaskIds: (r.referenceTaskIds as string[]) ?? [],
    continuation: Boolean(r.continuation),
    agentId: (r.agentId as string) || "",
  };
}

function artifactToPb(a: Artifact): Decoded {
  return {
    artifactId: a.artifactId ?? "", name: a.name ?? "", description: a.description ?? "",
    parts: (a.parts ?? []).map(partToPb), append: a.append ?? false, lastChunk: a.lastChunk ?? false,
    metadata: jsonToStruct(a.metadata),
  };
}

export function sendToPb(s: SendRequest): Decoded {
  return {
    platform: s.platform, chatId: s.chatId, taskId: s.taskId ?? "", kind: s.kind, text: s.text ?? "",
    parts: (s.parts ?? []).map(partToPb), artifact: s.artifact ? artifactToPb(s.artifact) : undefined,
    metadata: jsonToStruct(s.metadata), endsTurn: s.endsTurn ?? false, agentId: s.agentId ?? "",
  };
}

export function toolFromPb(t: Decoded): ToolDefinition {
  return {
    name: t.name as string, description: t.description as string, parametersJsonSchema: t.parametersJsonSchema as string,
    toolset: (t.toolset as string) || undefined, tags: (t.tags as string[]) ?? [],
  };
}

export function toolToPb(t: ToolDefinition): Decoded {
  return { name: t.name, description: t.description, parametersJsonSchema: t.parametersJsonSchema, toolset: t.toolset ?? "", tags: t.tags ?? [] };
}

export function recordDelegationFromPb(r: Decoded): RecordDelegationRequest {
  return r as unknown as RecordDelegationRequest;
}

/** A rough upper bound of a request's encoded size, for the call-stream size limit. */
export function approxSize(s: SendRequest): number {
  let n = 64 + (s.text?.length ?? 0) * 3;
  const parts = [...(s.parts ?? []), ...(s.artifact?.parts ?? [])];
  for (const p of parts) n += (p.text?.length ?? 0) * 3 + (p.raw?.length ?? 0) + (p.url?.length ?? 0) + (p.data !== undefined ? JSON.stringify(p.data).length : 0);
  if (s.metadata) n += JSON.stringify(s.metadata).length;
  return n;
}
