import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { tinyPng } from "./support/fake-media.js";
import { startFaultProxy, type FaultProxy } from "./support/fault-proxy.js";
import { listenLocal } from "./support/listen.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { freePort, startProcess, type TestProcess } from "./support/process.js";

/**
 * Media delivers what a provider made even while its database is away, and the generation is recorded and
 * charged all the same once the database is back, or before media exits when it is stopped meanwhile.
 * Router, identity, catalog and media run as processes on one Postgres; media alone reaches it through a
 * proxy this test cuts, so holds and charges go on working in identity.
 */

/** An OpenAI-style image provider that takes `thinkMs` over each image: long enough to cut the database during it. */
async function startSlowImages(thinkMs: number) {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ created: 1_700_000_000, data: [{ b64_json: tinyPng.toString("base64") }], usage: { input_tokens: 20, output_tokens: 1000, total_tokens: 1020 } }));
      }, thinkMs);
    });
  });
  return listenLocal(server);
}

const thinkMs = 2500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let database: TestDatabase;
let proxy: FaultProxy;
let images: Awaited<ReturnType<typeof startSlowImages>>;
let dataDir: string;
let apiUrl: string;
let bootstrapKey: string;
let mediaEnv: Record<string, string>;
let media: TestProcess;
const processes: TestProcess[] = [];

async function start(name: string, env: Record<string, string>): Promise<TestProcess> {
  const proc = startProcess(`services/${name}/dist/main.js`, env);
  processes.push(proc);
  await proc.waitFor(new RegExp(`${name} listening`), 60_000);
  return proc;
}

async function call(method: string, path: string, body?: unknown, key = bootstrapKey) {
  const res = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> & { data?: Array<{ b64_json?: string }> } };
}

async function newKey(): Promise<{ key: string; hash: string }> {
  const created = await call("POST", "/keys", { name: "images", limit: 1 });
  expect(created.status).toBe(201);
  return { key: String(created.body.key), hash: String((created.body.data as unknown as { hash: string }).hash) };
}

const usageOf = async (hash: string) => Number(((await call("GET", `/keys/${hash}`)).body.data as unknown as { usage: number }).usage);

/** One row's figures, read from the shared database directly: whether media wrote the generation, and the hold identity keeps. */
async function rows(generationId: string): Promise<{ generations: number; holds: number }> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const generations = await client.query(`SELECT 1 FROM media.generations WHERE id = $1`, [generationId]);
    const holds = await client.query(`SELECT 1 FROM identity.holds WHERE generation_id = $1`, [generationId]);
    return { generations: generations.rowCount ?? 0, holds: holds.rowCount ?? 0 };
  } finally {
    await client.end();
  }
}

/** Asks for an image, cuts media's database 1 s into it and restores it `outageMs` after the cut; the answer and its generation id. */
async function imageDuringOutage(key: string, outageMs: number | undefined) {
  const answer = call("POST", "/images/generations", { model: "img/slow", prompt: "a kite" }, key);
  await sleep(1000);
  await proxy.cut();
  const restored = outageMs === undefined ? Promise.resolve() : sleep(outageMs).then(() => proxy.restore());
  const res = await answer;
  return { res, id: String(res.headers.get("x-generation-id")), restored };
}

// A database a proxy can cut is a Postgres server; embedded PGlite lives inside each process.
describe.skipIf(!testEnv.databaseUrl)("media generations while media's database is away", () => {
  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url!);
    proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const proxied = new URL(database.url!);
    proxied.host = `127.0.0.1:${proxy.port}`;
    images = await startSlowImages(thinkMs);
    dataDir = await mkdtemp(join(tmpdir(), "switchyard-media-outage-"));
    const [identityPort, catalogPort, mediaPort, routerPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const at = (port: number) => `http://127.0.0.1:${port}`;
    bootstrapKey = `media-outage-bootstrap-${randomBytes(16).toString("hex")}`;
    const catalog = {
      providers: [{ slug: "pixels", name: "Pixels", adapter: "openai", base_url: images.baseUrl, api_key_env: "PIXELS_KEY" }],
      models: [
        {
          id: "img/slow",
          name: "Slow images",
          context_length: 32000,
          input_modalities: ["text"],
          output_modalities: ["image"],
          endpoints: [{ provider: "pixels", upstream_model: "slow", pricing: { prompt: "0", completion: "0", image_output: "0.04" } }],
        },
      ],
    };
    const common = {
      SWITCHYARD_INTERNAL_SECRET: randomBytes(32).toString("hex"),
      NATS_URL: testEnv.natsUrl ?? "",
      NATS_NAMESPACE: `mout${randomBytes(4).toString("hex")}`,
      SWITCHYARD_DATA_DIR: dataDir,
      DATABASE_URL: database.url!,
      LOG_LEVEL: "info",
      IDENTITY_URL: at(identityPort),
      CATALOG_URL: at(catalogPort),
      MEDIA_URL: at(mediaPort),
      PIXELS_KEY: "sk-pixels",
      ...(await catalogEnv(catalog)),
    };
    await start("identity", { ...common, PORT: String(identityPort), SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey });
    await start("catalog", { ...common, PORT: String(catalogPort) });
    mediaEnv = { ...common, PORT: String(mediaPort), DATABASE_URL: proxied.toString() };
    media = await start("media", mediaEnv);
    await start("router", { ...common, PORT: String(routerPort) });
    apiUrl = `${at(routerPort)}/api/v1`;
  }, 180_000);

  afterAll(async () => {
    await proxy?.restore();
    for (const proc of [...processes].reverse()) await proc.stop();
    await images?.stop();
    await proxy?.stop();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("answers with the image, then records and charges it once the database is back", async () => {
    const { key, hash } = await newKey();
    const { res, id, restored } = await imageDuringOutage(key, 4000);
    expect(res.status).toBe(200);
    expect(res.body.data?.[0]?.b64_json).toBe(tinyPng.toString("base64"));
    await restored;
    // The hold counts until the charge settles it: the image is paid for, at its price, once.
    await eventually(async () => (await usageOf(hash)) === 0.04, 30_000);
    expect(await rows(id)).toEqual({ generations: 1, holds: 0 });
    expect(media.output()).not.toMatch(/charge it by hand/);
  }, 60_000);

  it("writes what it could not record before it exits when stopped during the outage", async () => {
    const { key, hash } = await newKey();
    const { res, id } = await imageDuringOutage(key, undefined);
    expect(res.status).toBe(200);
    const stopped = media.stop(60_000);
    await sleep(2000);
    await proxy.restore();
    expect(await stopped).toBe(0);
    expect((await rows(id)).generations).toBe(1);
    // Its charge waits in media's outbox if it was not published before the exit: the next run sends it.
    media = await start("media", mediaEnv);
    await eventually(async () => (await usageOf(hash)) === 0.04, 30_000);
    expect((await rows(id)).holds).toBe(0);
  }, 90_000);
});
