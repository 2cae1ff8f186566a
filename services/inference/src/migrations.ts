import { endpointStatsMigrations } from "@switchyard/upstream";
import { outboxMigrations, type Migration } from "@switchyard/runtime";

export const schema = "inference";

export const migrations: Migration[] = [
  ...outboxMigrations(schema),
  ...endpointStatsMigrations(schema),
  {
    id: "001_generations",
    sql: `
CREATE TABLE inference.generations (
  id text PRIMARY KEY,
  key_hash text NOT NULL,
  organization_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  request_id text,
  session_id text,
  model text NOT NULL,
  requested_model text NOT NULL,
  provider text,
  upstream_id text,
  status text NOT NULL,
  streamed boolean NOT NULL,
  finish_reason text,
  native_finish_reason text,
  prompt_tokens integer NOT NULL,
  completion_tokens integer NOT NULL,
  reasoning_tokens integer NOT NULL DEFAULT 0,
  cached_tokens integer NOT NULL DEFAULT 0,
  usage_estimated boolean NOT NULL,
  cost_usd numeric(30, 12) NOT NULL,
  upstream_cost_usd numeric(30, 12),
  latency_ms integer,
  generation_time_ms integer NOT NULL,
  service_tier text,
  data_region text NOT NULL DEFAULT 'global',
  attempts jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX generations_by_key ON inference.generations (key_hash, created_at);
`,
  },
  {
    id: "002_generation_details",
    sql: `
-- What the guardrails' content filters redacted or flagged in a generation's prompt (null when nothing),
-- the preset it ran, and who asked: the request's end user and metadata, the app (HTTP-Referer, X-Title)
-- and its User-Agent; whether it ran on the workspace's own provider key (BYOK).
ALTER TABLE inference.generations ADD COLUMN content_filters jsonb, ADD COLUMN preset_id text,
  ADD COLUMN external_user text, ADD COLUMN metadata jsonb, ADD COLUMN http_referer text, ADD COLUMN app_title text,
  ADD COLUMN user_agent text, ADD COLUMN is_byok boolean NOT NULL DEFAULT false;
`,
  },
  {
    id: "003_generation_operation",
    sql: `
-- Embeddings and rerank generations say so (api_type); null for a chat completion in every dialect.
ALTER TABLE inference.generations ADD COLUMN operation text;
`,
  },
  {
    id: "004_generation_exclusions",
    sql: `
-- The endpoints a generation's routing left out, and why (null when none were).
ALTER TABLE inference.generations ADD COLUMN excluded jsonb;
`,
  },
  {
    id: "006_response_cache",
    sql: `
-- Answers kept for requests that opted in (X-OpenRouter-Cache), by cache key, within the workspace that asked;
-- expired rows are purged periodically and never served before that. A hit's own generation says which
-- generation's answer it replayed (cache_source_id).
CREATE TABLE inference.response_cache (
  key text PRIMARY KEY,
  workspace_id uuid NOT NULL,
  generation_id text NOT NULL,
  provider text NOT NULL,
  model text NOT NULL,
  answer jsonb NOT NULL,
  bytes integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX response_cache_expiry ON inference.response_cache (expires_at);
ALTER TABLE inference.generations ADD COLUMN cache_source_id text;
`,
  },
  {
    id: "007_generations_unread_index",
    sql: `
-- Generations are read by id only (the generation list reads identity's ledger), and every recorded
-- generation wrote this index.
DROP INDEX inference.generations_by_key;
`,
  },
  {
    id: "008_generation_cache_discount",
    sql: `
-- What prompt caching saved on a chat generation (GET /generation's cache_discount): its prompt at the prompt
-- price less what the prompt was charged, negative when cache writes cost more; null where no prompt token
-- was read from or written to a provider's cache.
ALTER TABLE inference.generations ADD COLUMN cache_discount_usd numeric;
`,
  },
];
