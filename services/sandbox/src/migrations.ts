import type { Migration } from "@switchyard/runtime";

export const schema = "sandbox";

export const migrations: Migration[] = [
  {
    id: "001_containers",
    sql: `
CREATE TABLE sandbox.containers (
  id text PRIMARY KEY,
  organization_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  origin text NOT NULL CHECK (origin IN ('reference', 'session', 'generation')),
  -- The session key or generation id the container was made for; the id itself for a reference.
  origin_key text NOT NULL,
  idle_ms integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now(),
  -- Set when the container was removed (idle, or replaced by a restart); its files stay listed in storage.
  ended_at timestamptz
);
CREATE INDEX containers_by_origin ON sandbox.containers (workspace_id, origin, origin_key, created_at DESC);
CREATE INDEX containers_live ON sandbox.containers (last_used_at) WHERE ended_at IS NULL;
`,
  },
];
