import { outboxMigrations, type Migration } from "@switchyard/runtime";

export const schema = "catalog";

export const migrations: Migration[] = [
  ...outboxMigrations(schema),
  {
    id: "001_presets_guardrails",
    sql: `
CREATE TABLE catalog.presets (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  slug text NOT NULL,
  name text NOT NULL,
  description text,
  status text NOT NULL DEFAULT 'active',
  status_updated_at timestamptz,
  designated_version_id uuid,
  creator_user_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, slug)
);

CREATE TABLE catalog.preset_versions (
  id uuid PRIMARY KEY,
  preset_id uuid NOT NULL REFERENCES catalog.presets(id) ON DELETE CASCADE,
  version integer NOT NULL,
  system_prompt text NOT NULL DEFAULT '',
  config jsonb NOT NULL,
  creator_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (preset_id, version)
);

CREATE TABLE catalog.guardrails (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  limit_usd numeric(20, 10),
  reset_interval text,
  include_byok_in_budgets boolean NOT NULL DEFAULT false,
  allowed_providers text[],
  ignored_providers text[],
  allowed_models text[],
  ignored_models text[],
  allowed_data_regions text[],
  enforce_zdr boolean,
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX guardrails_by_organization ON catalog.guardrails (organization_id, created_at, id);

CREATE TABLE catalog.guardrail_keys (
  guardrail_id uuid NOT NULL REFERENCES catalog.guardrails(id) ON DELETE CASCADE,
  key_hash text NOT NULL,
  organization_id uuid NOT NULL,
  assigned_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (guardrail_id, key_hash)
);
CREATE INDEX guardrail_keys_by_key ON catalog.guardrail_keys (key_hash);
`,
  },
  {
    id: "002_guardrail_limit_to_the_picodollar",
    // A budget is kept to the picodollar, as the spend it bounds is.
    sql: "ALTER TABLE catalog.guardrails ALTER COLUMN limit_usd TYPE numeric(22, 12);",
  },
];
