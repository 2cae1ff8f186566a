import { outboxMigrations, type Migration } from "@switchyard/runtime";

export const schema = "storage";

export const migrations: Migration[] = [
  ...outboxMigrations(schema),
  {
    id: "001_files",
    sql: `
CREATE TABLE storage.files (
  id text PRIMARY KEY,
  -- Upload order: listings page through it, so a cursor never skips or repeats a file.
  seq bigserial NOT NULL UNIQUE,
  organization_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  filename text NOT NULL,
  mime_type text NOT NULL,
  size_bytes bigint NOT NULL,
  object_key text NOT NULL,
  -- uploading: the object may be half-written; deleting: the row goes once the object is gone.
  state text NOT NULL CHECK (state IN ('uploading', 'ready', 'deleting')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX files_by_workspace ON storage.files (workspace_id, seq) WHERE state = 'ready';
CREATE INDEX files_unfinished ON storage.files (updated_at) WHERE state <> 'ready';

CREATE TABLE storage.container_files (
  container_id text NOT NULL,
  path text COLLATE "C" NOT NULL,
  organization_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  bytes bigint NOT NULL,
  object_key text,
  synced_at timestamptz NOT NULL,
  PRIMARY KEY (container_id, path)
);
CREATE INDEX container_files_by_workspace ON storage.container_files (workspace_id, container_id, path);
`,
  },
  {
    id: "002_generation_content",
    sql: `
-- What workspaces with input/output logging keep of their generations: the body in the object store,
-- here where it is and until when.
CREATE TABLE storage.generation_content (
  generation_id text PRIMARY KEY,
  organization_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  object_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX generation_content_by_expiry ON storage.generation_content (expires_at);
`,
  },
];
