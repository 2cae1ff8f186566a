import { endpointStatsMigrations } from "@switchyard/upstream";
import { outboxMigrations, type Migration } from "@switchyard/runtime";

export const schema = "media";

export const migrations: Migration[] = [
  ...outboxMigrations(schema),
  ...endpointStatsMigrations(schema),
  {
    id: "001_generations",
    sql: `
CREATE TABLE media.generations (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('transcription', 'image')),
  key_hash text NOT NULL,
  organization_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  request_id text,
  model text NOT NULL,
  provider text,
  status text NOT NULL,
  streamed boolean NOT NULL,
  seconds numeric(14, 3),
  images integer,
  prompt_tokens integer NOT NULL,
  completion_tokens integer NOT NULL,
  usage_estimated boolean NOT NULL,
  cost_usd numeric(30, 12) NOT NULL,
  latency_ms integer NOT NULL,
  attempts jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX generations_by_key ON media.generations (key_hash, created_at);
`,
  },
  {
    // What the reported usage cost: above cost_usd when the charge was capped at the held worst case.
    id: "002_upstream_cost",
    sql: `ALTER TABLE media.generations ADD COLUMN upstream_cost_usd numeric(30, 12);`,
  },
  {
    // What the guardrails' content filters redacted or flagged in the prompt (null when nothing), whether
    // it ran on the workspace's own provider key (BYOK), and the request's end user.
    id: "003_generation_details",
    sql: `ALTER TABLE media.generations ADD COLUMN content_filters jsonb, ADD COLUMN is_byok boolean NOT NULL DEFAULT false,
      ADD COLUMN external_user text;`,
  },
  {
    // Speech generations, and the characters of the text each spoke (null for other kinds).
    id: "004_speech",
    sql: `ALTER TABLE media.generations DROP CONSTRAINT generations_kind_check,
      ADD CONSTRAINT generations_kind_check CHECK (kind IN ('transcription', 'image', 'speech')),
      ADD COLUMN characters integer;`,
  },
  {
    // Media generations are read by id only (the generation list reads identity's ledger), and every
    // recorded one wrote this index.
    id: "005_generations_unread_index",
    sql: "DROP INDEX media.generations_by_key;",
  },
  {
    // The preset the request's model named, its session, and the app that asked (headers cut to 1000 characters).
    id: "006_generation_attribution",
    sql: `ALTER TABLE media.generations ADD COLUMN preset_id text, ADD COLUMN session_id text, ADD COLUMN http_referer text,
      ADD COLUMN app_title text, ADD COLUMN user_agent text;`,
  },
];
