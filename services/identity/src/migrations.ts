import { outboxMigrations, type Migration } from "@switchyard/runtime";

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
  ...outboxMigrations(schema),
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
  {
    id: "003_auth_codes",
    sql: `
-- PKCE authorization codes: only the code's SHA-256 is kept; a code mints at most one key.
CREATE TABLE identity.auth_codes (
  code_hash text PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES identity.organizations(id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES identity.workspaces(id) ON DELETE CASCADE,
  created_by_key text NOT NULL,
  callback_url text NOT NULL,
  code_challenge text,
  code_challenge_method text CHECK (code_challenge_method IN ('S256', 'plain')),
  key_limit numeric(20, 10),
  limit_reset text CHECK (limit_reset IN ('daily', 'weekly', 'monthly')),
  key_expires_at timestamptz,
  key_label text,
  spawn_agent text,
  spawn_cloud text,
  app_id integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  key_hash text
);
CREATE INDEX auth_codes_by_expiry ON identity.auth_codes (expires_at);
`,
  },
  {
    id: "004_federation",
    sql: `
-- Who may exchange which workload-identity tokens for access tokens acting as which key.
CREATE TABLE identity.federation_policies (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES identity.organizations(id) ON DELETE CASCADE,
  name text NOT NULL,
  issuer text NOT NULL,
  audiences text[] NOT NULL,
  claim_conditions jsonb NOT NULL,
  target_key_hash text NOT NULL REFERENCES identity.api_keys(hash) ON DELETE CASCADE,
  replay_protection boolean NOT NULL DEFAULT true,
  max_token_lifetime_seconds integer,
  disabled boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz
);
CREATE INDEX federation_policies_by_organization ON identity.federation_policies (organization_id, created_at, id);

-- Subject-token ids seen per issuer, kept until the token expires (replay protection).
CREATE TABLE identity.federation_seen_tokens (
  issuer text NOT NULL,
  jti text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (issuer, jti)
);
CREATE INDEX federation_seen_tokens_by_expiry ON identity.federation_seen_tokens (expires_at);

-- Keys that sign access tokens; the newest signs, the others stay published until tokens they signed expire.
CREATE TABLE identity.signing_keys (
  kid text PRIMARY KEY,
  algorithm text NOT NULL,
  private_jwk jsonb NOT NULL,
  public_jwk jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz
);
`,
  },
  {
    id: "005_provider_keys",
    sql: `
-- A workspace's own keys for providers (BYOK), sealed with the deployment's encryption secret.
CREATE TABLE identity.provider_keys (
  workspace_id uuid NOT NULL REFERENCES identity.workspaces(id) ON DELETE CASCADE,
  provider text NOT NULL,
  sealed_key text NOT NULL,
  label text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, provider)
);
`,
  },
  {
    id: "006_sealed_signing_keys",
    sql: `
-- Access-token signing keys are sealed like provider keys: a read copy of the database must not be enough
-- to forge tokens. A row holds its private key either sealed or, until identity next starts with an
-- encryption secret and seals it, in plain text as earlier versions wrote it.
ALTER TABLE identity.signing_keys ADD COLUMN sealed_private_jwk text;
ALTER TABLE identity.signing_keys ALTER COLUMN private_jwk DROP NOT NULL;
ALTER TABLE identity.signing_keys ADD CONSTRAINT signing_keys_one_private_key
  CHECK ((private_jwk IS NULL) <> (sealed_private_jwk IS NULL));
`,
  },
  {
    id: "007_hold_leases",
    sql: `
-- The replica that took a hold renews its lease while it lives; a lapsed lease frees the hold.
ALTER TABLE identity.holds ADD COLUMN owner text, ADD COLUMN lease_until timestamptz;
CREATE INDEX holds_by_owner ON identity.holds (owner) WHERE owner IS NOT NULL;
CREATE INDEX holds_by_lease ON identity.holds (lease_until) WHERE lease_until IS NOT NULL;
`,
  },
  {
    id: "008_guardrail_budgets",
    sql: `
-- The budgets of catalog's guardrails and the keys they bind, written by catalog in the transaction that
-- changes them, so a hold reads them here, in the statement that takes it, whatever a cache holds.
CREATE TABLE identity.guardrail_budgets (
  guardrail_id text PRIMARY KEY,
  organization_id uuid NOT NULL,
  limit_usd numeric NOT NULL,
  reset_interval text,
  include_byok boolean NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE identity.guardrail_budget_keys (
  key_hash text NOT NULL,
  guardrail_id text NOT NULL REFERENCES identity.guardrail_budgets ON DELETE CASCADE,
  PRIMARY KEY (key_hash, guardrail_id)
);
CREATE INDEX guardrail_budget_keys_by_guardrail ON identity.guardrail_budget_keys (guardrail_id);
`,
  },
  {
    id: "009_provider_key_fallback",
    sql: `
-- Whether a request may fall back to the operator's key for the provider when the workspace's own fails.
ALTER TABLE identity.provider_keys ADD COLUMN operator_fallback boolean NOT NULL DEFAULT true;
`,
  },
  {
    id: "010_activity",
    sql: `
-- What each ledger row was (chat, embeddings, rerank, transcription, image, speech), the endpoint that served,
-- its reasoning tokens, when its request arrived and its time from then to the last byte: the operator's
-- activity and generation list.
ALTER TABLE identity.ledger ADD COLUMN operation text NOT NULL DEFAULT 'chat', ADD COLUMN upstream_model text,
  ADD COLUMN reasoning_tokens integer NOT NULL DEFAULT 0, ADD COLUMN generation_time_ms integer, ADD COLUMN started_at timestamptz;
UPDATE identity.ledger SET started_at = occurred_at;
ALTER TABLE identity.ledger ALTER COLUMN started_at SET NOT NULL;
-- Newest first per organization, the id breaking ties: the generation list's order and cursor.
CREATE INDEX ledger_by_organization ON identity.ledger (organization_id, started_at DESC, generation_id DESC);
CREATE INDEX ledger_by_model ON identity.ledger (organization_id, model, started_at DESC, generation_id DESC);
CREATE INDEX ledger_failures ON identity.ledger (organization_id, started_at DESC, generation_id DESC) WHERE status <> 'completed';
CREATE INDEX ledger_by_key_started ON identity.ledger (key_hash, started_at DESC, generation_id DESC);

-- The ledger summed per UTC day, organization, workspace, model and endpoint as rows are written (and again
-- per key, for reads by key), so activity over a range reads a few rows per day whatever the traffic.
CREATE TABLE identity.activity_days (
  organization_id uuid NOT NULL,
  day date NOT NULL,
  workspace_id uuid NOT NULL,
  model text NOT NULL,
  provider text NOT NULL,
  upstream_model text NOT NULL,
  requests integer NOT NULL,
  errors integer NOT NULL,
  prompt_tokens bigint NOT NULL,
  completion_tokens bigint NOT NULL,
  reasoning_tokens bigint NOT NULL,
  cost numeric(24, 12) NOT NULL,
  byok_cost numeric(24, 12) NOT NULL,
  PRIMARY KEY (organization_id, day, workspace_id, model, provider, upstream_model)
);
CREATE TABLE identity.activity_key_days (
  key_hash text NOT NULL,
  day date NOT NULL,
  organization_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  model text NOT NULL,
  provider text NOT NULL,
  upstream_model text NOT NULL,
  requests integer NOT NULL,
  errors integer NOT NULL,
  prompt_tokens bigint NOT NULL,
  completion_tokens bigint NOT NULL,
  reasoning_tokens bigint NOT NULL,
  cost numeric(24, 12) NOT NULL,
  byok_cost numeric(24, 12) NOT NULL,
  -- A key's organization and workspace never change; they are in the key all the same, so that the sums'
  -- upsert cannot meet a row twice whatever a charge says.
  PRIMARY KEY (key_hash, day, organization_id, workspace_id, model, provider, upstream_model)
);
CREATE INDEX activity_key_days_by_organization ON identity.activity_key_days (organization_id, day);
-- Generations per time bucket (see activity/timings.ts), per day and model, for medians.
CREATE TABLE identity.activity_timings (
  organization_id uuid NOT NULL,
  day date NOT NULL,
  model text NOT NULL,
  bucket smallint NOT NULL,
  requests integer NOT NULL,
  PRIMARY KEY (organization_id, day, model, bucket)
);
INSERT INTO identity.activity_key_days
SELECT key_hash, (occurred_at AT TIME ZONE 'UTC')::date, organization_id, workspace_id, model, coalesce(provider, ''), '',
  count(*), count(*) FILTER (WHERE status <> 'completed'), sum(prompt_tokens), sum(completion_tokens), 0,
  coalesce(sum(cost) FILTER (WHERE NOT is_byok), 0), coalesce(sum(cost) FILTER (WHERE is_byok), 0)
FROM identity.ledger GROUP BY 1, 2, 3, 4, 5, 6;
INSERT INTO identity.activity_days
SELECT organization_id, day, workspace_id, model, provider, upstream_model, sum(requests), sum(errors), sum(prompt_tokens),
  sum(completion_tokens), sum(reasoning_tokens), sum(cost), sum(byok_cost)
FROM identity.activity_key_days GROUP BY 1, 2, 3, 4, 5, 6;
`,
  },
  {
    id: "011_credits",
    sql: `
-- An organization-wide credit limit the operator may set (USD; null: none). It binds every key's holds
-- as a key's limit does, against the organization's settled spend (BYOK excluded) and open holds.
ALTER TABLE identity.organizations ADD COLUMN credit_limit numeric(20, 10);
CREATE TABLE identity.organization_spend (
  organization_id uuid PRIMARY KEY,
  cost numeric(24, 12) NOT NULL,
  byok_cost numeric(24, 12) NOT NULL
);
INSERT INTO identity.organization_spend
SELECT organization_id, coalesce(sum(cost) FILTER (WHERE NOT is_byok), 0), coalesce(sum(cost) FILTER (WHERE is_byok), 0)
FROM identity.ledger GROUP BY organization_id;
ALTER TABLE identity.holds ADD COLUMN organization_id uuid;
UPDATE identity.holds h SET organization_id = k.organization_id FROM identity.api_keys k WHERE k.hash = h.key_hash;
CREATE INDEX holds_by_organization ON identity.holds (organization_id);
`,
  },
  {
    id: "012_ledger_unread_index",
    sql: `
-- No read looks ledger rows up by key and settlement time (spend windows read key_spend; the generation
-- list reads by key and arrival, ledger_by_key_started), and every charge wrote this index.
DROP INDEX identity.ledger_by_key;
`,
  },
  {
    id: "013_limits_to_the_picodollar",
    sql: `
-- Limits are kept to the picodollar, as the spend they bound is.
ALTER TABLE identity.api_keys ALTER COLUMN spend_limit TYPE numeric(22, 12);
ALTER TABLE identity.auth_codes ALTER COLUMN key_limit TYPE numeric(22, 12);
ALTER TABLE identity.organizations ALTER COLUMN credit_limit TYPE numeric(22, 12);
`,
  },
  {
    id: "014_budgets_per_key",
    sql: `
-- A guardrail budget binds each key on its own, against the key's spend (key_spend): no read is left of
-- the spend summed per guardrail.
DROP TABLE identity.guardrail_spend;
`,
  },
  {
    id: "015_key_external_user",
    sql: `
-- The partner's end user a key was made for (OpenRouter's external.user).
ALTER TABLE identity.api_keys ADD COLUMN external_user text;
`,
  },
];
