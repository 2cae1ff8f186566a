/** The services behind the router. */
export type ServiceName = "identity" | "catalog" | "inference" | "media" | "storage";

export interface ServiceRoute {
  /** Path prefix under `/api/v1`; matches the prefix itself and anything below it. */
  prefix: string;
  service: ServiceName;
  /** Routes that prove themselves otherwise (token exchange, PKCE exchange) take no key. */
  public?: boolean;
  /** Routes that take uploads (audio, reference images, files): bodies up to MAX_UPLOAD_BYTES instead of MAX_BODY_BYTES. */
  uploads?: boolean;
  /** The token endpoint: the router's own refusals (size, rate) answer in RFC 6749's shape, as identity's do. */
  oauthErrors?: boolean;
  /** Anthropic's Messages API: the router's own refusals (key, size, rate) answer in Anthropic's error shape, as inference's do. */
  anthropicErrors?: boolean;
}

/** Which service owns which public path; the first match wins, so a nested prefix comes before its parent. */
export const serviceRoutes: readonly ServiceRoute[] = [
  { prefix: "/api/v1/auth/keys/code", service: "identity" },
  { prefix: "/api/v1/auth/keys", service: "identity", public: true },
  { prefix: "/api/v1/oauth/token", service: "identity", public: true, oauthErrors: true },
  { prefix: "/api/v1/oauth", service: "identity", public: true },
  { prefix: "/api/v1/federation-policies", service: "identity" },
  { prefix: "/api/v1/keys", service: "identity" },
  { prefix: "/api/v1/key", service: "identity" },
  { prefix: "/api/v1/workspaces", service: "identity" },
  { prefix: "/api/v1/activity", service: "identity" },
  { prefix: "/api/v1/generations", service: "identity" },
  { prefix: "/api/v1/credits", service: "identity" },
  { prefix: "/api/v1/models", service: "catalog" },
  // `/model/{author}/{slug}` (one model): a sibling of `/models`, not its parent, as prefixes match whole segments.
  { prefix: "/api/v1/model", service: "catalog" },
  { prefix: "/api/v1/endpoints", service: "catalog" },
  { prefix: "/api/v1/providers", service: "catalog" },
  { prefix: "/api/v1/presets", service: "catalog" },
  { prefix: "/api/v1/guardrails", service: "catalog" },
  { prefix: "/api/v1/catalog", service: "catalog" },
  { prefix: "/api/v1/chat/completions", service: "inference" },
  { prefix: "/api/v1/responses", service: "inference" },
  { prefix: "/api/v1/completions", service: "inference" },
  { prefix: "/api/v1/messages", service: "inference", anthropicErrors: true },
  { prefix: "/api/v1/generation", service: "inference" },
  { prefix: "/api/v1/embeddings/models", service: "catalog" },
  { prefix: "/api/v1/embeddings", service: "inference" },
  { prefix: "/api/v1/rerank", service: "inference" },
  { prefix: "/api/v1/audio/transcriptions", service: "media", uploads: true },
  { prefix: "/api/v1/audio/speech", service: "media" },
  { prefix: "/api/v1/images/models", service: "catalog" },
  { prefix: "/api/v1/images", service: "media", uploads: true },
  { prefix: "/api/v1/files", service: "storage", uploads: true },
  { prefix: "/api/v1/containers", service: "storage" },
];

/** Case-insensitive, as the services' routes are: `/AUTH/KEYS/CODE` must not pass for the public `/auth/keys`. */
export function routeFor(path: string): ServiceRoute | undefined {
  const lower = path.toLowerCase();
  return serviceRoutes.find((route) => lower === route.prefix || lower.startsWith(`${route.prefix}/`));
}
