import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestNats, type TestNats } from "./support/nats.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { guardrailBudgetUnderConcurrency, keyLimitUnderConcurrency } from "./support/spend-scenarios.js";
import { spendTopologyStartupMs, startSpendTopology, type SpendTopology } from "./support/spend-topology.js";

/** Spend limits with router, identity, catalog and two inference replicas as separate processes over NATS. */
let nats: TestNats;
let database: TestDatabase;
let topology: SpendTopology;

beforeAll(async () => {
  nats = await startTestNats();
  database = await createTestDatabase();
  topology = await startSpendTopology({ natsUrl: nats.url, databaseUrl: database.url });
}, spendTopologyStartupMs);

afterAll(async () => {
  const codes = await topology?.stop();
  await nats?.stop();
  await database?.drop();
  // Checked after cleaning up, so a failed start leaves no NATS server or database behind.
  expect(codes).toEqual([0, 0, 0, 0, 0]); // every process drained cleanly on SIGTERM
});

describe("spend limits with two inference replicas behind the router", () => {
  it("lets exactly the remaining budget's worth of 50 concurrent requests through, whichever replica serves them", () => keyLimitUnderConcurrency(topology.driver));
  it("shares one guardrail budget between two keys under 50 concurrent requests spread over both replicas", () => guardrailBudgetUnderConcurrency(topology.driver));
});
