import { parsedWithinDepth } from "@switchyard/runtime";

/** Readers of JSON values as clients and providers send them: objects, strings, and objects inside JSON text. */
export type JsonObject = Record<string, unknown>;

/** Whether a value is a JSON object (not an array, not null). */
export const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** An object, or an empty one for anything else. */
export const record = (value: unknown): JsonObject => (isObject(value) ? value : {});

/** A string, or "" for anything else. */
export const text = (value: unknown): string => (typeof value === "string" ? value : "");

/**
 * The object a JSON text holds (a tool call's arguments), or an empty one when it holds no object or nests
 * deeper than a request's input may. A request's arguments that deep are refused before they get here
 * (`inputProblem`); a provider's are not, and an object that deep would overflow the stack of whatever
 * writes it as JSON next (a provider's request, the client's answer).
 */
export const objectOf = (json: string): JsonObject => record(parsedWithinDepth(json)?.value);
