import type { Filtered } from "./messages.js";
import { mergeFindings, scanText, type CompiledFilters, type Finding } from "./scan.js";

type Fields = Record<string, unknown>;

/** Schema keywords whose text the model reads as prose: a match there is redacted as a message's would be. */
const prose = new Set(["description", "title"]);
/** Schema keywords of names, types and references, which are not text a filter reads. */
const structural = new Set(["type", "$ref", "$schema", "$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "required", "format", "pattern"]);
/** Keywords whose values the client reads back as written (see `scanContract`). */
const contract = new Set(["enum", "const", "default", "examples"]);
/** Keywords whose value is an object of schemas by name: the names stay, each schema is walked. */
const byName = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

const isObject = (value: unknown): value is Fields => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * Scans text whose words are part of what the client reads back (an enum value, a default, an example, a
 * tool's settings): editing it would change the contract, so a match a filter would redact blocks instead.
 */
function scanContract(filters: CompiledFilters, value: unknown, found: Finding[][]): void {
  if (typeof value === "string") {
    found.push(scanText(filters, value, "other").findings.map((f) => (f.action === "redact" ? { ...f, action: "block" } : f)));
  } else if (Array.isArray(value)) {
    for (const item of value) scanContract(filters, item, found);
  } else if (isObject(value)) {
    for (const key in value) scanContract(filters, value[key], found);
  }
}

/** A string the model reads as prose, redacted where it matches. */
function filterProse(filters: CompiledFilters, text: string, found: Finding[][]): string {
  const scanned = scanText(filters, text, "other");
  found.push(scanned.findings);
  return scanned.text;
}

/**
 * A JSON schema (a tool's parameters, a response format's schema): descriptions and titles redacted, the
 * schemas under it walked by keyword, names kept, and every other value scanned as contract. The same
 * object when nothing was redacted.
 */
function filterSchema(filters: CompiledFilters, schema: unknown, found: Finding[][], depth = 0): unknown {
  if (Array.isArray(schema)) {
    let changed = false;
    const out = schema.map((item: unknown) => {
      const walked = filterSchema(filters, item, found, depth + 1);
      if (walked !== item) changed = true;
      return walked;
    });
    return changed ? out : schema;
  }
  if (!isObject(schema)) return schema;
  if (depth > 64) {
    // Deeper than a schema is written: the rest is scanned without its keywords.
    scanContract(filters, schema, found);
    return schema;
  }
  let out = schema;
  const set = (key: string, value: unknown) => {
    if (out === schema) out = { ...schema };
    out[key] = value;
  };
  for (const key in schema) {
    const value = schema[key];
    let next = value;
    if (prose.has(key) && typeof value === "string") next = filterProse(filters, value, found);
    else if (byName.has(key) && isObject(value)) next = filterSchemas(filters, value, found, depth);
    else if (structural.has(key) && (typeof value === "string" || Array.isArray(value))) continue;
    else if (contract.has(key)) scanContract(filters, value, found);
    else if (isObject(value) || (Array.isArray(value) && value.every(isObject))) next = filterSchema(filters, value, found, depth + 1);
    else scanContract(filters, value, found);
    if (next !== value) set(key, next);
  }
  return out;
}

/** An object of schemas by name: each schema walked, the names kept. */
function filterSchemas(filters: CompiledFilters, schemas: Fields, found: Finding[][], depth: number): Fields {
  let out = schemas;
  for (const name in schemas) {
    const walked = filterSchema(filters, schemas[name], found, depth + 1);
    if (walked === schemas[name]) continue;
    if (out === schemas) out = { ...schemas };
    out[name] = walked;
  }
  return out;
}

/** One tool: a function's description and parameters; a tool of another type's settings as contract. Names stay. */
function filterTool(filters: CompiledFilters, tool: unknown, found: Finding[][]): unknown {
  if (!isObject(tool)) return tool;
  const fn = tool.type === "function" && isObject(tool.function) ? tool.function : undefined;
  if (!fn) {
    for (const key in tool) if (key !== "type" && key !== "name") scanContract(filters, tool[key], found);
    return tool;
  }
  let next = fn;
  const set = (key: string, value: unknown) => {
    if (next === fn) next = { ...fn };
    next[key] = value;
  };
  if (typeof fn.description === "string") {
    const description = filterProse(filters, fn.description, found);
    if (description !== fn.description) set("description", description);
  }
  if (fn.parameters !== undefined) {
    const parameters = filterSchema(filters, fn.parameters, found);
    if (parameters !== fn.parameters) set("parameters", parameters);
  }
  return next === fn ? tool : { ...tool, function: next };
}

/**
 * Scans what a chat body declares beside its messages that the model reads: function tools' descriptions
 * and parameter schemas, other tools' settings, and a `json_schema` response format's description and
 * schema. Descriptions and titles are redacted; enum values, defaults, examples and settings are part of
 * what the client reads back, so a match a filter would redact there blocks the request. Names are how
 * calls and formats come back, and stay as they are. The same values when nothing was redacted.
 */
export function filterDeclarations(filters: CompiledFilters, tools: unknown, responseFormat: unknown): Filtered<{ tools: unknown; responseFormat: unknown }> {
  if (filters.empty) return { value: { tools, responseFormat }, findings: [] };
  const found: Finding[][] = [];
  let nextTools = tools;
  if (Array.isArray(tools)) {
    const out = tools.map((tool: unknown) => filterTool(filters, tool, found));
    if (out.some((tool, i) => tool !== tools[i])) nextTools = out;
  }
  let nextFormat = responseFormat;
  const format = isObject(responseFormat) ? responseFormat : undefined;
  if (format && isObject(format.schema)) {
    // JSON mode's own schema (`json_object` with `schema`).
    const walked = filterSchema(filters, format.schema, found);
    if (walked !== format.schema) nextFormat = { ...format, schema: walked };
  }
  const schema = format && isObject(format.json_schema) ? format.json_schema : undefined;
  if (format && schema) {
    const walked = filterSchema(filters, { description: schema.description, schema: schema.schema }, found) as Fields;
    if (walked.description !== schema.description || walked.schema !== schema.schema) {
      const json_schema = { ...schema, ...(walked.description !== undefined ? { description: walked.description } : {}), ...(walked.schema !== undefined ? { schema: walked.schema } : {}) };
      nextFormat = { ...format, json_schema };
    }
  }
  return { value: { tools: nextTools, responseFormat: nextFormat }, findings: mergeFindings(found) };
}
