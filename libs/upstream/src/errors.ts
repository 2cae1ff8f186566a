/**
 * A provider failure. `retryable` says whether another endpoint may be tried (timeouts, rate limits,
 * server errors, connection failures); `retryAfterMs` comes from the provider's Retry-After.
 */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/**
 * Providers may quote the key they were sent in their error text ("Incorrect API key provided: sk-…", or the
 * whole Authorization header). That text goes on to the caller, the logs and the generation's attempts, so the
 * key is cut out of it first, where the attempt that sent the key catches the error.
 */
export function withoutKey(error: UpstreamError, key: string | undefined): void {
  if (key && key.length >= 8 && error.message.includes(key)) error.message = error.message.split(key).join("[redacted]");
}

/** The provider refused the workspace's own key (BYOK): the workspace has a key to fix, the request is fine. */
export class WorkspaceKeyRefused extends UpstreamError {}
