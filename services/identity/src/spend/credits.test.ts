import { randomUUID } from "node:crypto";
import type { HoldRequest } from "@switchyard/contracts";
import { migrate, openPglite, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations, schema } from "../migrations.js";
import { credits, noCreditLimit, setCreditLimit } from "./credits.js";
import { organizationWithKeys } from "../../../../tests/support/identity-keys.js";
import { placeHold } from "./holds.js";
import { recordCharges } from "./ledger.js";

let organization: string;
let workspace: string;
const [limited, unlimited] = ["c".repeat(64), "d".repeat(64)];

let db: Db;
beforeAll(async () => {
  db = await openPglite();
  await migrate(db, schema, migrations);
  ({ organization, workspace } = await organizationWithKeys(db, [[limited, "100"], [unlimited, null]]));
});
afterAll(async () => {
  await db?.close();
});

const hold = (key: string, amount: string, isByok = false): Promise<unknown> =>
  placeHold(db, { generation_id: `gen-${randomUUID()}`, key_hash: key, amount_usd: amount, is_byok: isByok, ttl_ms: 60_000 } satisfies HoldRequest);

describe("organization credits", () => {
  it("reads no limit as the largest one, and the settled spend without BYOK", async () => {
    expect(await credits(db, organization)).toEqual({ total_credits: noCreditLimit, total_usage: 0 });
    const charge = (cost: string, isByok: boolean) => ({
      id: randomUUID(),
      subject: "inference.generation.completed.v1" as const,
      occurred_at: new Date().toISOString(),
      data: {
        generation_id: `gen-${randomUUID()}`,
        key_hash: unlimited,
        organization_id: organization,
        workspace_id: workspace,
        guardrail_ids: [],
        model: "m",
        provider: "p",
        status: "completed" as const,
        streamed: false,
        prompt_tokens: 1,
        completion_tokens: 1,
        usage_estimated: false,
        cost_usd: cost,
        is_byok: isByok,
      },
    });
    await recordCharges(db, [charge("0.25", false), charge("7", true)]);
    expect(await credits(db, organization)).toEqual({ total_credits: noCreditLimit, total_usage: 0.25 });
  });

  it("binds the holds of every key, limited or not, against spend and other holds; BYOK holds spend no credits", async () => {
    await setCreditLimit(db, organization, 1.25);
    expect(await credits(db, organization)).toEqual({ total_credits: 1.25, total_usage: 0.25 });
    expect(await hold(unlimited, "0.5")).toEqual({ granted: true });
    expect(await hold(limited, "0.4")).toEqual({ granted: true });
    // 1.25 - 0.25 spent - 0.9 held leaves 0.1.
    expect(await hold(unlimited, "0.2")).toEqual({ granted: false, limited_by: "organization", guardrail_id: null, exhausted: false, remaining_usd: "0.1" });
    expect(await hold(limited, "0.2")).toMatchObject({ granted: false, limited_by: "organization" });
    expect(await hold(unlimited, "50", true)).toEqual({ granted: true });
    expect(await hold(unlimited, "0.1")).toEqual({ granted: true });
  });

  it("lets go of every key at once when the limit is removed", async () => {
    await setCreditLimit(db, organization, null);
    expect(await hold(unlimited, "500")).toEqual({ granted: true });
    expect(await credits(db, organization)).toMatchObject({ total_credits: noCreditLimit });
  });
});
