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
  {
    id: "002_slots_leases_reports",
    sql: `
-- The container's slot of host user ids (SANDBOX_UID_BASE + slot): no two containers share one. An ended
-- container keeps its slot until its processes and files are removed; NULL once they are.
ALTER TABLE sandbox.containers ADD COLUMN uid_slot integer UNIQUE;
CREATE INDEX containers_ended_unremoved ON sandbox.containers (ended_at) WHERE ended_at IS NOT NULL AND uid_slot IS NOT NULL;
CREATE INDEX containers_live_by_workspace ON sandbox.containers (workspace_id) WHERE ended_at IS NULL;
-- Counts the container's file reports; a replica whose memory of the last report is of another count
-- reports the whole tree again.
ALTER TABLE sandbox.containers ADD COLUMN files_reports integer NOT NULL DEFAULT 0;

-- 'instance': names this database's containers on a machine (their folder under SANDBOX_DIR and their
-- cgroups), so that two gateways with their own databases on one machine never share a container.
CREATE TABLE sandbox.settings (
  name text PRIMARY KEY,
  value text NOT NULL
);

-- One holder at a time per container, across replicas: taken when free or expired, renewed while held.
CREATE TABLE sandbox.leases (
  id text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
);
`,
  },
];
