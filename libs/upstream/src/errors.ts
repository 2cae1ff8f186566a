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

/** The provider refused the workspace's own key (BYOK): the workspace has a key to fix, the request is fine. */
export class WorkspaceKeyRefused extends UpstreamError {}
