import { randomUUID } from "node:crypto";
import type { EventData, EventSubject, ResolvedModel, ResolveRequest } from "@switchyard/contracts";
import { createMemoryBus, silentLogger } from "@switchyard/runtime";
import { describe, expect, it } from "vitest";
import { cachedResolve } from "./remote-memory.js";

const org = "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b01";
const ws = "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b02";
const request: ResolveRequest = { model: "a/b", keyHash: "k1", workspaceId: ws, organizationId: org, host: undefined };
const model = (preset: ResolvedModel["preset"] = null) => ({ model: "a/b", preset }) as unknown as ResolvedModel;
const publish = <S extends EventSubject>(bus: ReturnType<typeof createMemoryBus>, subject: S, data: EventData<S>) =>
  bus.publish({ id: randomUUID(), subject, occurred_at: new Date().toISOString(), data });
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("cachedResolve", () => {
  it("asks catalog once per model, key and workspace until a change or the time limit", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
    let clock = 0;
    const asked: ResolveRequest[] = [];
    const cache = await cachedResolve(async (r) => (asked.push(r), model()), bus, { ttlMs: 1000, maxEntries: 10, now: () => clock });
    await cache.resolve(request);
    await cache.resolve(request);
    await cache.resolve({ ...request, keyHash: "k2" });
    expect(asked).toHaveLength(2);
    await publish(bus, "catalog.guardrail.updated.v1", { id: randomUUID(), organization_id: org });
    await settle();
    await cache.resolve(request);
    expect(asked).toHaveLength(3);
    clock = 1001;
    await cache.resolve(request);
    expect(asked).toHaveLength(4);
    await cache.stop();
  });

  it("never remembers presets, nor an answer asked for before a change arrived", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
    let calls = 0;
    let release: () => void = () => undefined;
    const cache = await cachedResolve(
      async (r) => {
        calls++;
        if (calls === 3) await new Promise<void>((resolve) => (release = resolve));
        return r.model.startsWith("@preset/") ? model({ id: "00000000-0000-4000-8000-000000000009", slug: "p", version: 1, system_prompt: "", config: {} }) : model();
      },
      bus,
      { ttlMs: 60_000, maxEntries: 10 },
    );
    await cache.resolve({ ...request, model: "@preset/p" });
    await cache.resolve({ ...request, model: "@preset/p" });
    expect(calls).toBe(2);
    const pending = cache.resolve(request);
    await settle();
    await publish(bus, "identity.workspace.updated.v1", { id: ws, organization_id: org, default_guardrail_id: randomUUID() });
    await settle();
    release();
    await pending;
    await cache.resolve(request);
    expect(calls).toBe(4);
    await cache.stop();
  });
});
