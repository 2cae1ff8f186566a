import type { AnthropicFile, OpenAiFile } from "@switchyard/contracts";

/** Where a provider's Files API is and whose key calls it (the workspace's own key: BYOK). */
export interface ProviderAccount {
  /** e.g. https://api.openai.com/v1 or https://api.anthropic.com/v1 */
  baseUrl: string;
  apiKey: string;
}

export interface UploadInput {
  bytes: Buffer;
  filename: string;
  mimeType: string;
  /** OpenAI requires one (`user_data` when the caller gives none); Anthropic has none. */
  purpose?: string | undefined;
  /** OpenAI only: when the file expires. */
  expiresAfter?: { anchor: "created_at"; seconds: number } | undefined;
}

export interface ListInput {
  limit: number;
  /** Forward cursor: OpenAI's `after`, Anthropic's `after_id`. */
  after?: string | undefined;
  /** Reverse cursor: Anthropic's `before_id` (OpenAI has none: refuse with a ProviderFileError 400). */
  before?: string | undefined;
  order?: "asc" | "desc" | undefined;
}

export interface ProviderPage<F> {
  data: F[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** The provider's answer body as a stream, with its type and length when known. */
export interface ProviderContent {
  body: AsyncIterable<Uint8Array>;
  contentType: string;
  contentLength: number | undefined;
}

/** One provider's Files API, answering in that provider's shape (`_shape` set). */
export interface ProviderFiles<F extends OpenAiFile | AnthropicFile> {
  upload(input: UploadInput, account: ProviderAccount, signal: AbortSignal): Promise<F>;
  list(input: ListInput, account: ProviderAccount, signal: AbortSignal): Promise<ProviderPage<F>>;
  retrieve(id: string, account: ProviderAccount, signal: AbortSignal): Promise<F>;
  content(id: string, account: ProviderAccount, signal: AbortSignal): Promise<ProviderContent>;
  remove(id: string, account: ProviderAccount, signal: AbortSignal): Promise<void>;
}
