import { randomBytes, randomUUID } from "node:crypto";
import type { EventEnvelope } from "@switchyard/contracts";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startTestNats, type TestNats } from "./support/nats.js";
import { spendCatalog } from "./support/spend-fixture.js";
import { gatewayDriver, spendHelpers } from "./support/spend-scenarios.js";

/** Spend over a NATS of this test's own, which it stops and starts: usage arrives once, whatever the transport does. */
let nats: TestNats;
let gw: TestGateway;
let alpha: FakeProvider;
const namespace = `spend${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  nats = await startTestNats({ private: true });
  alpha = await startFakeProvider("alpha");
  gw = await startTestGateway({ ...(await catalogEnv(spendCatalog(alpha.baseUrl))), NATS_URL: nats.url, NATS_NAMESPACE: namespace });
  h = spendHelpers(gatewayDriver(gw, alpha));
}, 30_000);
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
  await nats?.stop();
});

let h: ReturnType<typeof spendHelpers>;
const usageOf = async (hash: string) => (await h.keyRecord(hash)).usage;

describe("spend when NATS fails", () => {
  it("serves 20 completions while NATS is down and applies their usage exactly once when it returns", async () => {
    const { key, hash } = await h.newKey({ limit: 1 });
    await nats.kill!();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => h.chat(key, "spend/cent")),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await usageOf(hash)).toBe(0); // the charges wait in the outbox; their holds still count meanwhile
    expect((await gw.call("GET", `/keys/${hash}`)).body.data?.limit_remaining).toBe(1);

    await nats.restart!();
    await eventually(async () => ((await usageOf(hash)) ?? 0) >= 0.2, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await usageOf(hash)).toBe(0.2);
  }, 60_000);

  it("applies a charge once however often it is delivered or reported", async () => {
    const { key, hash } = await h.newKey();
    const me = (await gw.call("GET", "/key", { key })).body.data!;
    const charge = (generationId: string, cost: string): EventEnvelope<"inference.generation.completed.v1"> => ({
      id: randomUUID(),
      subject: "inference.generation.completed.v1",
      occurred_at: new Date().toISOString(),
      data: {
        generation_id: generationId,
        key_hash: hash,
        organization_id: String(me.organization_id),
        workspace_id: String(me.workspace_id),
        guardrail_ids: [],
        model: "spend/cent",
        provider: "alpha",
        status: "completed",
        streamed: false,
        prompt_tokens: 1,
        completion_tokens: 1,
        usage_estimated: false,
        cost_usd: cost,
        is_byok: false,
      },
    });
    const nc = await connect({ servers: nats.url });
    try {
      const js = jetstream(nc);
      const subject = `${namespace}.inference.generation.completed.v1`;
      const send = (event: EventEnvelope) => js.publish(subject, JSON.stringify(event), { msgID: randomUUID() });
      const first = charge(`gen-fault-${randomUUID()}`, "0.05");
      await send(first);
      // The same event again under a new message id: a redelivery after a crash between commit and ack, or a
      // publish retried after the deduplication window. Then the same generation reported by a new event.
      await send(first);
      await send({ ...charge(first.data.generation_id, "0.05"), id: randomUUID() });
      // A charge published after them: once it is applied, the duplicates before it have been handled.
      await send(charge(`gen-fault-${randomUUID()}`, "0.01"));
      await eventually(async () => ((await usageOf(hash)) ?? 0) >= 0.06, 10_000);
      expect(await usageOf(hash)).toBe(0.06);
    } finally {
      await nc.close();
    }
  }, 30_000);
});
