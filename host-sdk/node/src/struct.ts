// google.protobuf.Struct / Value at the seam: the contract's metadata and
// data fields travel as Struct/Value messages; host code sees JSON.
import type { JsonObject, JsonValue } from "./contract.js";

/** The decoded (proto-loader) shape of a google.protobuf.Value. */
export interface PbValue {
  nullValue?: unknown;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: PbStruct;
  listValue?: { values?: PbValue[] };
  kind?: string;
}
/** The decoded shape of a google.protobuf.Struct. */
export interface PbStruct {
  fields?: Record<string, PbValue>;
}

export function valueToJson(v: PbValue | undefined | null): JsonValue {
  if (!v) return null;
  switch (v.kind) {
    case "numberValue": return v.numberValue ?? 0;
    case "stringValue": return v.stringValue ?? "";
    case "boolValue": return v.boolValue ?? false;
    case "structValue": return structToJson(v.structValue);
    case "listValue": return (v.listValue?.values ?? []).map(valueToJson);
    case "nullValue": return null;
  }
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.numberValue !== undefined) return v.numberValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.structValue !== undefined) return structToJson(v.structValue);
  if (v.listValue !== undefined) return (v.listValue.values ?? []).map(valueToJson);
  return null;
}

export function structToJson(s: PbStruct | undefined | null): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(s?.fields ?? {})) out[k] = valueToJson(v);
  return out;
}

export function jsonToValue(v: JsonValue | undefined): PbValue {
  if (v === null || v === undefined) return { nullValue: "NULL_VALUE" };
  if (typeof v === "number") return { numberValue: v };
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(jsonToValue) } };
  return { structValue: jsonToStruct(v) };
}

export function jsonToStruct(o: JsonObject | undefined): PbStruct | undefined {
  if (!o) return undefined;
  const fields: Record<string, PbValue> = {};
  for (const [k, v] of Object.entries(o)) fields[k] = jsonToValue(v);
  return { fields };
}
