import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenRouter } from "@openrouter/sdk";
import { holdResponse, resolveModelResponse } from "@switchyard/contracts";
import { createServiceSigner } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { catalogEnv, fixtureCatalog } from "./support/catalog-fixture.js";
import { startFakeAgent, toolResults, type FakeAgent } from "./support/fake-agent.js";
import { startFakeMediaProvider, type FakeMediaProvider } from "./support/fake-media.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { eventually } from "./support/eventually.js";
import { startTestNats } from "./support/nats.js";
import { testObjectStoreEnv } from "./support/object-store.js";
import { startTestIssuer, type TestIssuer } from "./support/test-issuer.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { freePort, startProcess, type TestProcess } from "./support/process.js";

/** Router and identity as separate processes, talking over HTTP and NATS, as in a cluster. */
const bootstrapKey = `multi-process-bootstrap-${randomBytes(16).toString("hex")}`;
const internalSecret = randomBytes(32).toString("hex");
let nats: Awaited<ReturnType<typeof startTestNats>>;
let database: TestDatabase;
let dataDir: string;
let sandboxDir: string;
let identity: TestProcess;
let catalog: TestProcess;
let inference: TestProcess;
let media: TestProcess;
let storage: TestProcess;
let sandbox: TestProcess;
let agent: FakeAgent;
let speech: FakeMediaProvider;
let upstream: FakeProvider;
let issuer: TestIssuer;
let router: TestProcess;
let apiUrl: string;

beforeAll(async () => {
  nats = await startTestNats();
  database = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), "switchyard-mp-"));
  // Containers run as their own users, who must be able to reach their folders.
  sandboxDir = await mkdtemp(join(tmpdir(), "switchyard-mp-sandboxes-"));
  await chmod(sandboxDir, 0o711);
  const [identityPort, catalogPort, inferencePort, mediaPort, storagePort, sandboxPort, routerPort] = await Promise.all(Array.from({ length: 7 }, () => freePort()));
  // A model that runs the shell commands its user message lists, then reports what they printed.
  agent = await startFakeAgent({
    "from-user": (body) => {
      if (body.messages.some((m) => m.role === "tool")) return { content: JSON.stringify(toolResults(body.messages)) };
      return { calls: [{ name: "shell", arguments: { commands: JSON.parse(String(body.messages.at(-1)!.content)) as string[] } }] };
    },
  });
  upstream = await startFakeProvider("alpha", () => "ok");
  speech = await startFakeMediaProvider();
  const common = {
    SWITCHYARD_INTERNAL_SECRET: internalSecret,
    NATS_URL: nats.url,
    NATS_NAMESPACE: `mp${randomBytes(4).toString("hex")}`,
    SWITCHYARD_DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    ...(database.url ? { DATABASE_URL: database.url } : {}),
  };
  issuer = await startTestIssuer({ alg: "ES256" });
  identity = startProcess("services/identity/dist/main.js", {
    ...common,
    PORT: String(identityPort),
    SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey,
    FEDERATION_ALLOW_INSECURE_ISSUERS: "true",
    // Seals the access-token signing key; with DATABASE_URL identity makes none up.
    SWITCHYARD_ENCRYPTION_KEY: "multi-process-test-encryption-secret-0123456789",
  });
  await identity.waitFor(/identity listening/, 45_000);
  const identityUrl = `http://127.0.0.1:${identityPort}`;
  const catalogFile = await catalogEnv({
    ...fixtureCatalog,
    providers: [
      ...fixtureCatalog.providers.map((p) => (p.slug === "alpha" ? { ...p, base_url: upstream.baseUrl } : p)),
      { slug: "speech", name: "Speech", adapter: "openai", base_url: speech.baseUrl, requires_api_key: false },
      { slug: "scripted", name: "Scripted", adapter: "openai-compatible", base_url: agent.baseUrl, requires_api_key: false },
    ],
    models: [
      ...fixtureCatalog.models,
      {
        id: "openai/whisper-1",
        name: "Whisper",
        context_length: 1,
        input_modalities: ["audio"],
        output_modalities: ["transcription"],
        endpoints: [{ provider: "speech", upstream_model: "ok", pricing: { prompt: "0", completion: "0", audio_second: "0.0001" } }],
      },
      {
        id: "agent/shell",
        name: "Shell agent",
        context_length: 8000,
        endpoints: [{ provider: "scripted", upstream_model: "from-user", pricing: { prompt: "0.000001", completion: "0.000002" }, supported_parameters: ["tools", "tool_choice"] }],
      },
    ],
  });
  const catalogUrl = `http://127.0.0.1:${catalogPort}`;
  // Catalog is asked only once requests arrive, so the three start side by side.
  catalog = startProcess("services/catalog/dist/main.js", { ...common, ...catalogFile, PORT: String(catalogPort), IDENTITY_URL: identityUrl });
  inference = startProcess("services/inference/dist/main.js", {
    ...common,
    ...catalogFile,
    PORT: String(inferencePort),
    CATALOG_URL: catalogUrl,
    IDENTITY_URL: identityUrl,
    MEDIA_URL: `http://127.0.0.1:${mediaPort}`,
    SANDBOX_URL: `http://127.0.0.1:${sandboxPort}`,
  });
  media = startProcess("services/media/dist/main.js", { ...common, PORT: String(mediaPort), CATALOG_URL: catalogUrl, IDENTITY_URL: identityUrl });
  storage = startProcess("services/storage/dist/main.js", { ...common, ...testObjectStoreEnv(), PORT: String(storagePort), IDENTITY_URL: identityUrl });
  sandbox = startProcess("services/sandbox/dist/main.js", { ...common, PORT: String(sandboxPort), STORAGE_URL: `http://127.0.0.1:${storagePort}`, SANDBOX_DIR: sandboxDir });
  // Embedded databases (no DATABASE_URL) start slowly when the machine is busy.
  await Promise.all([catalog.waitFor(/catalog listening/, 45_000), inference.waitFor(/inference listening/, 45_000), media.waitFor(/media listening/, 45_000), storage.waitFor(/storage listening/, 45_000), sandbox.waitFor(/sandbox listening/, 45_000)]);
  router = startProcess("services/router/dist/main.js", {
    ...common,
    PORT: String(routerPort),
    IDENTITY_URL: identityUrl,
    CATALOG_URL: catalogUrl,
    INFERENCE_URL: `http://127.0.0.1:${inferencePort}`,
    MEDIA_URL: `http://127.0.0.1:${mediaPort}`,
    STORAGE_URL: `http://127.0.0.1:${storagePort}`,
  });
  await router.waitFor(/router listening/);
  apiUrl = `http://127.0.0.1:${routerPort}/api/v1`;
}, 120_000);

afterAll(async () => {
  const codes = await Promise.all([router?.stop(), inference?.stop(), media?.stop(), sandbox?.stop(), storage?.stop(), catalog?.stop(), identity?.stop()]);
  await agent?.stop();
  await upstream?.stop();
  await speech?.stop();
  await issuer?.stop();
  await nats?.stop();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  if (sandboxDir) await rm(sandboxDir, { recursive: true, force: true });
  // Checked after cleaning up, so a failed start leaves no NATS server or database behind.
  expect(codes).toEqual([0, 0, 0, 0, 0, 0, 0]); // every process drained cleanly on SIGTERM
});

describe("router and identity as separate processes", () => {
  it("stops accepting a key within a second of it being disabled", async () => {
    const admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: apiUrl });
    const created = await admin.apiKeys.create({ requestBody: { name: "worker" } });
    const worker = new OpenRouter({ apiKey: created.key, serverURL: apiUrl });
    // Warm the router's cache so the refusal below must come from the event, not a cache miss.
    expect((await worker.apiKeys.getCurrentKeyMetadata()).data.isManagementKey).toBe(false);
    expect((await worker.apiKeys.getCurrentKeyMetadata()).data.isManagementKey).toBe(false);

    await admin.apiKeys.update({ hash: created.data.hash, requestBody: { disabled: true } });
    const took = await eventually(async () => (await fetch(`${apiUrl}/key`, { headers: { authorization: `Bearer ${created.key}` } })).status === 401);
    expect(took).toBeLessThan(1000);
  });

  it("shows a guardrail change in /models/user within a second, and a workspace change too", async () => {
    const admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: apiUrl });
    const created = await admin.apiKeys.create({ requestBody: { name: "catalog user" } });
    const modelsOf = async () => {
      const res = await fetch(`${apiUrl}/models/user`, { headers: { authorization: `Bearer ${created.key}` } });
      return ((await res.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id).sort().join(",");
    };
    expect(await modelsOf()).toBe("agent/shell,openai/x,vendor/a,vendor/b");
    const guardrail = await admin.guardrails.create({ createGuardrailRequest: { name: "only x", allowedModels: ["openai/x"] } });
    await admin.guardrails.bulkAssignKeys({ id: guardrail.data.id, bulkAssignKeysRequest: { keyHashes: [created.data.hash] } });
    expect(await eventually(async () => (await modelsOf()) === "openai/x")).toBeLessThan(1000);
    await admin.guardrails.delete({ id: guardrail.data.id });
    expect(await eventually(async () => (await modelsOf()) === "agent/shell,openai/x,vendor/a,vendor/b")).toBeLessThan(1000);
    // Workspace preferences live in identity; catalog's cached copy is dropped by the event.
    const ws = (await admin.workspaces.list()).result.data.find((w) => w.slug === "default")!;
    const patch = (body: object) =>
      fetch(`${apiUrl}/workspaces/${ws.id}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${bootstrapKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    await patch({ data_collection: "deny" }); // beta trains on data: vendor/b, served only by beta, goes
    expect(await eventually(async () => (await modelsOf()) === "agent/shell,openai/x,vendor/a")).toBeLessThan(1000);
    await patch({ data_collection: "allow" });
    expect(await eventually(async () => (await modelsOf()) === "agent/shell,openai/x,vendor/a,vendor/b")).toBeLessThan(1000);
  });

  it("resolves models for other services over catalog's internal route, and only for them", async () => {
    const port = /"port":(\d+)[^\n]*catalog listening/.exec(catalog.output())?.[1];
    const me = await fetch(`${apiUrl}/key`, { headers: { authorization: `Bearer ${bootstrapKey}` } }).then((r) => r.json() as Promise<{ data: Record<string, string> }>);
    const body = JSON.stringify({ model: "vendor/a:floor", key_hash: me.data.hash, workspace_id: me.data.workspace_id, organization_id: me.data.organization_id });
    const call = (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${port}/internal/models/resolve`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
    expect((await call({})).status).toBe(401);
    const token = await createServiceSigner(internalSecret, "inference")();
    const res = await call({ "x-switchyard-service": token });
    expect(res.status).toBe(200);
    const resolved = resolveModelResponse.parse(await res.json()).data;
    expect(resolved).toMatchObject({ model: "vendor/a", variant: "floor", sort: "price" });
    expect(resolved.endpoints.map((e) => e.provider)).toEqual(["alpha", "beta"]);
  });

  it("places spend holds for other services over identity's internal route, and only for them", async () => {
    const port = /"port":(\d+)[^\n]*identity listening/.exec(identity.output())?.[1];
    const me = await fetch(`${apiUrl}/key`, { headers: { authorization: `Bearer ${bootstrapKey}` } }).then((r) => r.json() as Promise<{ data: Record<string, string> }>);
    const hold = { generation_id: "gen-mp-hold", key_hash: me.data.hash, amount_usd: "0.001", is_byok: false, ttl_ms: 60_000 };
    const call = (path: string, headers: Record<string, string>, body: unknown = hold, type = "application/json") =>
      fetch(`http://127.0.0.1:${port}${path}`, { method: "POST", headers: { "content-type": type, ...headers }, body: JSON.stringify(body) });
    const unsigned = await call("/internal/holds", {});
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toEqual({ error: { code: 401, message: "Missing or invalid internal service credentials" } });
    const service = { "x-switchyard-service": await createServiceSigner(internalSecret, "inference")() };
    for (const path of ["/internal/holds", "/Internal/Holds/"]) {
      const placed = await call(path, service);
      expect(placed.status).toBe(200);
      expect(holdResponse.parse(await placed.json()).data.granted).toBe(true);
    }
    const invalid = await call("/internal/holds", service, { ...hold, ttl_ms: 1 });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { message: string } }).error.message).toMatch(/ttl_ms/);
    // A body that is not plain JSON goes to express, which answers in the same envelope.
    const text = await call("/internal/holds", service, hold, "text/plain");
    expect(text.status).toBe(400);
    expect(((await text.json()) as { error: { code: number } }).error.code).toBe(400);
    expect((await call("/internal/holds/release", service, { generation_id: hold.generation_id })).status).toBe(200);
  });

  it("serves chat completions through router, inference and catalog processes, streamed and not", async () => {
    const admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: apiUrl });
    const created = await admin.apiKeys.create({ requestBody: { name: "chatter" } });
    const openai = new OpenAI({ apiKey: created.key, baseURL: apiUrl });
    // beta's base URL answers nothing: whichever comes first, the request ends on alpha.
    const completion = await openai.chat.completions.create({ model: "vendor/a", messages: [{ role: "user", content: "hi" }] });
    expect(completion.choices[0]?.message.content).toBe("Hello from alpha");
    expect(upstream.requests.at(-1)?.authorization).toBe("Bearer alpha-secret");
    const stream = await openai.chat.completions.create({ model: "vendor/a", messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Hello from alpha");
    const generationId = completion.id;
    const record = await fetch(`${apiUrl}/generation?id=${generationId}`, { headers: { authorization: `Bearer ${created.key}` } });
    expect(((await record.json()) as { data: { provider_name: string } }).data.provider_name).toBe("alpha");
  });

  it("transcribes through the media process and charges the key through NATS and identity's ledger", async () => {
    const admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: apiUrl });
    const created = await admin.apiKeys.create({ requestBody: { name: "listener" } });
    const wav = Buffer.alloc(44 + 32_000);
    wav.write("RIFF", 0, "latin1");
    wav.write("WAVEfmt ", 8, "latin1");
    wav.writeUInt32LE(16, 16);
    wav.writeUInt16LE(1, 20);
    wav.writeUInt16LE(1, 22);
    wav.writeUInt32LE(16_000, 24);
    wav.writeUInt32LE(32_000, 28);
    wav.writeUInt16LE(2, 32);
    wav.writeUInt16LE(16, 34);
    wav.write("data", 36, "latin1");
    wav.writeUInt32LE(32_000, 40);
    const result = await new OpenRouter({ apiKey: created.key, serverURL: apiUrl }).stt.createTranscription({
      sttRequest: { model: "openai/whisper-1", inputAudio: { data: wav.toString("base64"), format: "wav" } },
    });
    expect(result.usage?.seconds).toBe(1);
    expect(await eventually(async () => (await admin.apiKeys.get({ hash: created.data.hash })).data.usage === result.usage?.cost, 10_000)).toBeLessThan(10_000);
    // Identity lists it; inference finds its record at media, over media's internal route.
    const listed = (await (await fetch(`${apiUrl}/generations?api_key_hash=${created.data.hash}`, { headers: { authorization: `Bearer ${bootstrapKey}` } })).json()) as {
      data: Array<{ id: string; operation: string; cost: number }>;
    };
    expect(listed.data).toEqual([expect.objectContaining({ operation: "transcription", cost: result.usage?.cost })]);
    const record = (await admin.generations.getGeneration({ id: listed.data[0]!.id })).data;
    expect(record).toMatchObject({ apiType: "stt", model: "openai/whisper-1", totalCost: result.usage?.cost });
  });

  it("stores a file through the storage process and lists container files a sandbox synced over the internal route", async () => {
    const admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: apiUrl });
    const created = await admin.apiKeys.create({ requestBody: { name: "filer" } });
    const user = new OpenRouter({ apiKey: created.key, serverURL: apiUrl });
    const file = (await user.files.upload({ requestBody: { file: { fileName: "notes.txt", content: Buffer.from("kept in the bucket") } } })) as unknown as { id: string };
    expect(Buffer.from(await new Response(await user.files.download({ fileId: file.id })).arrayBuffer()).toString()).toBe("kept in the bucket");
    const port = /"port":(\d+)[^\n]*storage listening/.exec(storage.output())?.[1];
    const me = await fetch(`${apiUrl}/key`, { headers: { authorization: `Bearer ${created.key}` } }).then((r) => r.json() as Promise<{ data: Record<string, string> }>);
    const synced = await fetch(`http://127.0.0.1:${port}/internal/containers/sess_mp/files`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-switchyard-service": await createServiceSigner(internalSecret, "inference")() },
      body: JSON.stringify({ organization_id: me.data.organization_id, workspace_id: me.data.workspace_id, files: [{ path: "out.txt", bytes: 3, modified_at: new Date().toISOString() }] }),
    });
    expect(synced.status).toBe(200);
    expect((await user.containers.listContainerFiles({ containerId: "sess_mp" })).data.map((f) => f.path)).toEqual(["out.txt"]);
  });

  it("runs a shell tool through the inference, sandbox and storage processes, and lists the files it wrote", async () => {
    const admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: apiUrl });
    const created = await admin.apiKeys.create({ requestBody: { name: "agent" } });
    const headers = { authorization: `Bearer ${created.key}`, "content-type": "application/json" };
    const res = await fetch(`${apiUrl}/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        model: "agent/shell",
        session_id: "mp-session",
        messages: [{ role: "user", content: JSON.stringify(["mkdir -p out && printf done > out/result.txt && cat out/result.txt"]) }],
        tools: [{ type: "openrouter:shell" }],
      }),
    });
    const answer = (await res.json()) as { choices: Array<{ message: { content: string } }>; usage: { server_tool_use_details: Record<string, number> } };
    expect(res.status, JSON.stringify(answer)).toBe(200);
    const [result] = JSON.parse(answer.choices[0]!.message.content) as Array<{ container_id: string; results: Array<{ stdout: string }> }>;
    expect(result, JSON.stringify(result)).toMatchObject({ container_id: "sess_mp-session", results: [{ stdout: "done" }] });
    expect(answer.usage.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1 });
    const listed = await fetch(`${apiUrl}/containers/sess_mp-session/files`, { headers }).then((r) => r.json() as Promise<{ data: Array<{ path: string; bytes: number }> }>);
    expect(listed.data).toEqual([expect.objectContaining({ path: "out/result.txt", bytes: 4, container_id: "sess_mp-session" })]);
  });

  it("serves Prometheus metrics on every process, counted under its own service", async () => {
    // A request through the router reaches identity (the key's lookup) and catalog.
    expect((await fetch(`${apiUrl}/models/user`, { headers: { authorization: `Bearer ${bootstrapKey}` } })).status).toBe(200);
    const processes = { identity, catalog, inference, media, storage, sandbox, router };
    for (const [name, proc] of Object.entries(processes)) {
      const port = new RegExp(`"port":(\\d+)[^\\n]*${name} listening`).exec(proc.output())?.[1];
      const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
      expect(text, name).toContain("switchyard_process_cpu_seconds_total");
      expect(text, name).toContain("# TYPE switchyard_http_request_duration_seconds histogram");
      if (["router", "identity", "catalog"].includes(name)) expect(text, name).toMatch(new RegExp(`switchyard_http_requests_total\\{service="${name}"`));
    }
  });

  it("keeps services closed to callers that bypass the router", async () => {
    const port = /"port":(\d+)/.exec(identity.output())?.[1];
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/keys`, { headers: { authorization: `Bearer ${bootstrapKey}` } });
    expect(res.status).toBe(401);
    const forged = await fetch(`http://127.0.0.1:${port}/api/v1/keys`, { headers: { "x-switchyard-caller": "eyJhbGciOiJub25lIn0.e30." } });
    expect(forged.status).toBe(401);
  });

  it("accepts an exchanged access token at the router, verified with identity's published keys", async () => {
    const admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: apiUrl });
    const target = await admin.apiKeys.create({ requestBody: { name: "workload" } });
    const created = await fetch(`${apiUrl}/federation-policies`, {
      method: "POST",
      headers: { authorization: `Bearer ${bootstrapKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "ci", issuer: issuer.issuer, audiences: ["switchyard"], target_key_hash: target.data.hash, claim_conditions: [{ claim: "sub", matches: "repo:acme/*" }] }),
    }).then((r) => r.json() as Promise<{ data: { id: string } }>);
    const token = await new OpenRouter({ serverURL: apiUrl }).oAuth.createOauthToken({
      tokenExchangeRequest: {
        grantType: "urn:ietf:params:oauth:grant-type:token-exchange",
        subjectToken: await issuer.sign({ jti: crypto.randomUUID() }),
        subjectTokenType: "urn:ietf:params:oauth:token-type:jwt",
        federationPolicyId: created.data.id,
      },
    });
    const me = await fetch(`${apiUrl}/key`, { headers: { authorization: `Bearer ${token.accessToken}` } }).then((r) => r.json() as Promise<{ data: { hash: string } }>);
    expect(me.data.hash).toBe(target.data.hash);
    const forged = `${token.accessToken.slice(0, -4)}AAAA`;
    expect((await fetch(`${apiUrl}/key`, { headers: { authorization: `Bearer ${forged}` } })).status).toBe(401);
  });
});
