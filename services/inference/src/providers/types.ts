import type { UpstreamTarget } from "@switchyard/upstream";

export { UpstreamError, type UpstreamTarget } from "@switchyard/upstream";

export interface UpstreamUsage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from the provider's cache; part of promptTokens. */
  cachedTokens: number;
  /** Prompt tokens written to the provider's cache; part of promptTokens. */
  cacheWriteTokens: number;
  reasoningTokens: number;
}

/** A buffered completion as the provider answered it, in OpenAI's shape. */
export interface UpstreamCompletion {
  id: string | null;
  choices: Array<Record<string, unknown>>;
  usage: UpstreamUsage | undefined;
  systemFingerprint: string | null;
  serviceTier: string | null;
}

/** One streamed chunk in OpenAI's shape, with its usage split off. */
export interface UpstreamChunk {
  choices: Array<Record<string, unknown>>;
  usage: UpstreamUsage | undefined;
  systemFingerprint: string | null;
  serviceTier: string | null;
}

/** One file per wire format; OpenAI-compatible servers share one implementation. */
export interface ChatProvider {
  complete(body: Record<string, unknown>, target: UpstreamTarget, signal: AbortSignal): Promise<UpstreamCompletion>;
  /** Resolves once the provider has accepted the request (its headers arrived); throws before that. */
  stream(body: Record<string, unknown>, target: UpstreamTarget, signal: AbortSignal): Promise<AsyncIterable<UpstreamChunk>>;
}
