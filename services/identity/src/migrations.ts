import { outboxMigration, type Migration } from "@switchyard/runtime";

export const schema = "identity";

export const migrations: Migration[] = [
  {
    id: "001_organizations_workspaces_keys",
    sql: `
CREATE TABLE identity.organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE identity.workspaces (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES identity.organizations(id) ON DELETE CASCADE,
  name text NOT NULL,
  slug text NOT NULL,
  description text,
  is_default boolean NOT NULL DEFAULT false,
  default_guardrail_id uuid NOT NULL,
  allowed_providers text[],
  ignored_providers text[],
  data_collection text NOT NULL DEFAULT 'allow' CHECK (data_collection IN ('allow', 'deny')),
  zdr boolean NOT NULL DEFAULT false,
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz,
  UNIQUE (organization_id, slug)
);

CREATE UNIQUE INDEX workspaces_one_default ON identity.workspaces (organization_id) WHERE is_default;

CREATE TABLE identity.api_keys (
  hash text PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES identity.organizations(id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES identity.workspaces(id),
  name text NOT NULL,
  label text NOT NULL,
  disabled boolean NOT NULL DEFAULT false,
  is_management boolean NOT NULL DEFAULT false,
  spend_limit numeric(20, 10),
  limit_reset text CHECK (limit_reset IN ('daily', 'weekly', 'monthly')),
  include_byok_in_limit boolean NOT NULL DEFAULT false,
  rate_limit_per_minute integer,
  expires_at timestamptz,
  creator_user_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz
);

CREATE INDEX api_keys_by_organization ON identity.api_keys (organization_id, created_at, hash);
CREATE INDEX api_keys_by_workspace ON identity.api_keys (workspace_id);
`,
  },
  outboxMigration(schema),
  {
    id: "002_spend",
    sql: `
-- One row per generation, whoever reports it twice: the record every usage figure is computed from.
CREATE TABLE identity.ledger (
  generation_id text PRIMARY KEY,
  event_id uuid NOT NULL,
  key_hash text NOT NULL,
  organization_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  guardrail_ids text[] NOT NULL,
  model text NOT NULL,
  provider text,
  status text NOT NULL,
  prompt_tokens integer NOT NULL,
  completion_tokens integer NOT NULL,
  usage_estimated boolean NOT NULL,
  cost numeric(24, 12) NOT NULL,
  is_byok boolean NOT NULL,
  occurred_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_by_key ON identity.ledger (key_hash, occurred_at);

-- The ledger summed per UTC day as rows are written, so a window is a few rows whatever the traffic.
CREATE TABLE identity.key_spend (
  key_hash text NOT NULL,
  day date NOT NULL,
  cost numeric(24, 12) NOT NULL,
  byok_cost numeric(24, 12) NOT NULL,
  PRIMARY KEY (key_hash, day)
);
CREATE TABLE identity.guardrail_spend (
  guardrail_id text NOT NULL,
  day date NOT NULL,
  cost numeric(24, 12) NOT NULL,
  byok_cost numeric(24, 12) NOT NULL,
  PRIMARY KEY (guardrail_id, day)
);

-- Worst cases reserved by requests under way; settled by the ledger, ignored once expired.
CREATE TABLE identity.holds (
  generation_id text PRIMARY KEY,
  key_hash text NOT NULL,
  guardrail_ids text[] NOT NULL,
  amount numeric(24, 12) NOT NULL,
  is_byok boolean NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX holds_by_key ON identity.holds (key_hash);
CREATE INDEX holds_by_guardrail ON identity.holds USING gin (guardrail_ids);
CREATE INDEX holds_by_expiry ON identity.holds (expires_at);
`,
  },
];
