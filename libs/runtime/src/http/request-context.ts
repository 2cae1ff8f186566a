import { AsyncLocalStorage } from "node:async_hooks";

export const requestIdHeader = "x-request-id";

/**
 * What a request's log line says beyond its method, path and status, noted by whoever learns it while the
 * request is handled: the router (the key), the generation (model, provider, tokens, cost).
 */
export interface RequestNote {
  /** The first 12 hex characters of the calling key's hash: enough to find the key, never its secret. */
  key?: string;
  model?: string;
  provider?: string;
  generationId?: string;
  promptTokens?: number;
  completionTokens?: number;
  /** USD charged; the generations of one request (a server-tool loop's turns) add up. */
  cost?: number;
}

interface RequestScope {
  id: string;
  note: RequestNote;
}

/** The request being handled: its id, for calls to other services made on its behalf, and its note. */
const currentRequest = new AsyncLocalStorage<RequestScope>();

export const currentRequestId = (): string | undefined => currentRequest.getStore()?.id;

/**
 * Runs `fn` as the handling of request `id`. Within one process the same request may be entered again (the
 * in-process router hands it to a service's app): it keeps one note, so the line logged for it says all.
 */
export const withRequestId = (id: string, fn: () => void): void => {
  const outer = currentRequest.getStore();
  currentRequest.run(outer?.id === id ? outer : { id, note: {} }, fn);
};

/** The note of the request being handled (a detached object outside a request). */
export const currentNote = (): RequestNote => currentRequest.getStore()?.note ?? {};

/** Adds to the note of the request being handled; counts (tokens, cost) add up, the rest is replaced. */
export function noteRequest(fields: RequestNote): void {
  const note = currentRequest.getStore()?.note;
  if (!note) return;
  for (const name of ["promptTokens", "completionTokens", "cost"] as const) {
    const value = fields[name];
    if (value !== undefined) note[name] = (note[name] ?? 0) + value;
  }
  if (fields.key !== undefined) note.key = fields.key;
  if (fields.model !== undefined) note.model = fields.model;
  if (fields.provider !== undefined) note.provider = fields.provider;
  if (fields.generationId !== undefined) note.generationId = fields.generationId;
}
