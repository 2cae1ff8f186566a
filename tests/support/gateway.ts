import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, silentLogger } from "@switchyard/runtime";
import { loadStandaloneConfig, startStandalone, type Standalone, type StandaloneOptions } from "@switchyard/standalone";
import { testObjectStoreEnv } from "./object-store.js";
import { createTestDatabase } from "./postgres.js";

export const bootstrapKey = "test-bootstrap-management-secret-0123456789";

export interface TestGateway {
  baseUrl: string;
  apiUrl: string;
  standalone: Standalone;
  /** The gateway's own Postgres database, for reading a service's rows; undefined with embedded PGlite. */
  databaseUrl: string | undefined;
  /** Calls the API with a key; returns status, headers and parsed JSON body. */
  call(method: string, path: string, options?: { key?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<TestResponse>;
  stop(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // Tests read arbitrary response fields; the schema checks live in the contract tests.
  body: Record<string, unknown> & { data?: Record<string, unknown> & Array<Record<string, unknown>>; error?: { code: number; message: string } };
}

/**
 * The whole gateway in this process, on its own database, through real HTTP on 127.0.0.1; `options` are
 * what no environment variable sets (web fetch's made-up hosts).
 */
export async function startTestGateway(
  env: Record<string, string> = {},
  options: StandaloneOptions & { logs?: NodeJS.WritableStream; embeddedDatabase?: boolean } = {},
): Promise<TestGateway> {
  // Embedded PGlite in the data directory, as a standalone gateway without DATABASE_URL runs, even where the tests have a server.
  const database = options.embeddedDatabase ? { url: undefined, drop: async () => {} } : await createTestDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), "switchyard-test-"));
  const config = loadStandaloneConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    SWITCHYARD_DATA_DIR: dataDir,
    SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey,
    LOG_LEVEL: "silent",
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...testObjectStoreEnv(),
    ...env,
  });
  // A test that reads the logs gets every line at info and above as JSON; the others log nothing.
  const logger = options.logs ? createLogger({ destination: options.logs }) : silentLogger();
  const standalone = await startStandalone(config, logger, options);
  const baseUrl = `http://127.0.0.1:${standalone.port}`;
  const apiUrl = `${baseUrl}/api/v1`;
  return {
    baseUrl,
    apiUrl,
    standalone,
    databaseUrl: database.url,
    async call(method, path, options = {}) {
      const key = options.key === undefined ? bootstrapKey : options.key;
      const headers: Record<string, string> = { ...options.headers };
      if (key !== null) headers.authorization = `Bearer ${key}`;
      let body: string | undefined;
      if (options.body !== undefined) {
        headers["content-type"] = "application/json";
        body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
      }
      const res = await fetch(`${apiUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as TestResponse["body"]) : {} };
    },
    async stop() {
      await standalone.stop();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
