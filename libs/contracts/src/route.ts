import type { z } from "zod";

/** Who may call a route: nobody in particular, any key, management keys only, inference keys only. */
export type RouteAuth = "none" | "any" | "management" | "inference";

/** One operation of the public API: the single source for validation, docs and the OpenAPI document. */
export interface RouteContract {
  operationId: string;
  method: "get" | "post" | "patch" | "put" | "delete";
  /** OpenAPI-style path relative to `/api/v1`, e.g. `/keys/{hash}`. */
  path: string;
  summary: string;
  tag: string;
  auth: RouteAuth;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  bodyType?: "json" | "form" | "multipart";
  /** Success responses by status; `null` means no JSON body (e.g. a binary download or SSE). */
  responses: Record<number, z.ZodType | null>;
  /** Error statuses the operation documents. */
  errors: readonly number[];
  /** Errors in Anthropic's shape instead of the standard envelope (the Messages routes). */
  errorShape?: "anthropic";
}

export const defineRoute = <T extends RouteContract>(route: T): T => route;
