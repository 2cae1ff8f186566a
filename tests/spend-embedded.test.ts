import { afterAll, beforeAll, describe, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { spendCatalog } from "./support/spend-fixture.js";
import {
  changedLimitBindsNextRequest,
  creditsUnderConcurrency,
  gatewayDriver,
  guardrailBudgetUnderConcurrency,
  keyLimitUnderConcurrency,
  limitCountsRequestsInFlight,
  type SpendDriver,
} from "./support/spend-scenarios.js";

/**
 * Limits, budgets and credits on the embedded database a standalone gateway runs without DATABASE_URL,
 * where the holds of requests no limit applies to are kept in memory instead of in rows.
 */
let gw: TestGateway;
let alpha: FakeProvider;
let driver: SpendDriver;

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  gw = await startTestGateway(await catalogEnv(spendCatalog(alpha.baseUrl)), { embeddedDatabase: true });
  driver = gatewayDriver(gw, alpha);
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
});

describe("spend on an embedded database", () => {
  it("lets at most a key's remaining limit's worth of 50 concurrent requests reach a provider", () => keyLimitUnderConcurrency(driver));
  it("applies a changed limit to the very next request", () => changedLimitBindsNextRequest(driver));
  it("counts a request in flight against a limit set while it waits", () => limitCountsRequestsInFlight(driver, gw.apiUrl));
  it("gives each key of a guardrail its own budget under 50 concurrent requests", () => guardrailBudgetUnderConcurrency(driver));
  // Last: the credits bind every key of the organization from then on.
  it("binds every key of the organization to its credits under 50 concurrent requests", () => creditsUnderConcurrency(driver));
});
