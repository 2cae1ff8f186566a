/** The gateway's API as the console calls it: same origin, the management key in the Authorization header only. */
export const apiBase = "/api/v1";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What a refusal means to the person reading it; the gateway's own message follows where it adds something. */
function explain(status: number, message: string | undefined): string {
  if (status === 401) return "The key was not accepted: it is wrong, expired or disabled.";
  if (status === 403) return message ? `Not allowed: ${message}` : "This key is not allowed to do that.";
  if (status === 429) return "Too many requests: wait a moment and try again.";
  if (status >= 500) return `The gateway could not answer (${status})${message ? `: ${message}` : ""}.`;
  return message ?? `The request failed (${status}).`;
}

export async function errorOf(res: Response): Promise<ApiError> {
  let message: string | undefined;
  try {
    const body = (await res.json()) as { error?: { message?: unknown } };
    if (typeof body.error?.message === "string") message = body.error.message;
  } catch {
    // not JSON: the status says enough
  }
  return new ApiError(res.status, explain(res.status, message));
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined | null>;
  signal?: AbortSignal;
}

export type Call = <T>(path: string, options?: RequestOptions) => Promise<T>;

export function urlOf(path: string, query?: RequestOptions["query"]): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
  const search = params.toString();
  return `${apiBase}${path}${search ? `?${search}` : ""}`;
}

/** A caller bound to one key; `onUnauthorized` hears a 401 so the console can ask for a key again. */
export function caller(key: string, onUnauthorized: () => void): Call {
  return async <T>(path: string, options: RequestOptions = {}): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(urlOf(path, options.query), {
        method: options.method ?? "GET",
        headers: { authorization: `Bearer ${key}`, ...(options.body === undefined ? {} : { "content-type": "application/json" }) },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
        cache: "no-store",
      });
    } catch (error) {
      if (error instanceof DOMException && error.name === "AbortError") throw error;
      throw new ApiError(0, "The gateway could not be reached.");
    }
    if (!res.ok) {
      const error = await errorOf(res);
      if (res.status === 401) onUnauthorized();
      throw error;
    }
    return (await res.json()) as T;
  };
}
