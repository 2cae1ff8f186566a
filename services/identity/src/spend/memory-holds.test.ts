import { randomUUID } from "node:crypto";
import type { HoldRequest } from "@switchyard/contracts";
import { migrate, openPglite, outboxSink, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chargeEvent, holdRequest as request, organizationWithKeys } from "../../../../tests/support/identity-keys.js";
import { updateKey } from "../keys/service.js";
import { migrations, schema } from "../migrations.js";
import { writeBudgets } from "./budgets.js";
import { setCreditLimit } from "./credits.js";
import { openHolds, placeHold, releaseHold } from "./holds.js";
import { recordCharges } from "./ledger.js";
import { MemoryHolds } from "./memory-holds.js";

let db: Db;
beforeAll(async () => {
  db = await openPglite();
  await migrate(db, schema, migrations);
}, 60_000);
afterAll(async () => {
  await db?.close();
});

/** The embedded database with every statement noted; a Db of its own, so it has memory holds of its own. */
function counted() {
  const statements: string[] = [];
  const wrapped: Db = { ...db, query: (text, params) => (statements.push(text), db.query(text, params)), transaction: (fn) => db.transaction(fn) };
  return { wrapped, statements };
}

const newKey = () => randomUUID().replaceAll("-", "").repeat(2);
const rowsOf = async (key: string) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM identity.holds WHERE key_hash = $1`, [key]))[0]!.n;
const keyDeps = (wrapped: Db) => ({ db: wrapped, events: outboxSink(schema, { wake() {} }) });

const charge = (hold: HoldRequest, organization: string, cost: string) =>
  chargeEvent({ generation_id: hold.generation_id, key_hash: hold.key_hash, organization_id: organization, workspace_id: randomUUID() }, cost);

describe("unbound holds on an embedded database", () => {
  it("holds an unlimited key's requests in memory: one read of its binding, then no statement at all", async () => {
    const { wrapped, statements } = counted();
    const key = newKey();
    await organizationWithKeys(db, [[key, null]]);
    const decisions = await Promise.all(Array.from({ length: 5 }, () => placeHold(wrapped, request(key, "0.01"))));
    expect(decisions.every((d) => d.granted)).toBe(true);
    const read = statements.length;
    expect(read).toBeLessThanOrEqual(5);
    expect((await placeHold(wrapped, request(key, "0.01"))).granted).toBe(true);
    expect(statements).toHaveLength(read);
    expect(await rowsOf(key)).toBe(0);
    expect(await openHolds(wrapped)).toMatchObject({ active: 6 });
  });

  it("counts them against a key limit set while they are open, and the row of a limited attempt replaces them", async () => {
    const { wrapped } = counted();
    const key = newKey();
    const { organization } = await organizationWithKeys(db, [[key, null]]);
    const open = request(key, "0.6");
    expect(await placeHold(wrapped, open)).toEqual({ granted: true });
    await updateKey(keyDeps(wrapped), organization, key, { limit: 1 });

    expect(await placeHold(wrapped, request(key, "0.5"))).toMatchObject({ granted: false, limited_by: "key", remaining_usd: "0.4" });
    expect((await placeHold(wrapped, request(key, "0.4"))).granted).toBe(true);
    // The open request's next attempt is checked against the limit, without what it held itself; its row
    // replaces what memory held.
    expect(await placeHold(wrapped, { ...open, amount_usd: "0.7" })).toMatchObject({ granted: false, remaining_usd: "0.6" });
    expect((await placeHold(wrapped, { ...open, amount_usd: "0.6" })).granted).toBe(true);
    expect(await rowsOf(key)).toBe(2);
    expect(await placeHold(wrapped, request(key, "0.01"))).toMatchObject({ granted: false, remaining_usd: "0" });
  });

  it("counts BYOK requests against a key limit only when the key says so", async () => {
    const { wrapped } = counted();
    const key = newKey();
    const { organization } = await organizationWithKeys(db, [[key, "1"]]);
    expect((await placeHold(wrapped, request(key, "0.8", { is_byok: true }))).granted).toBe(true);
    expect(await rowsOf(key)).toBe(0);
    expect((await placeHold(wrapped, request(key, "0.9"))).granted).toBe(true);
    await updateKey(keyDeps(wrapped), organization, key, { include_byok_in_limit: true });
    expect(await placeHold(wrapped, request(key, "0.2"))).toMatchObject({ granted: false, remaining_usd: "0" });
  });

  it("counts an organization's open holds against a credit limit set while they are open", async () => {
    const { wrapped } = counted();
    const [a, b] = [newKey(), newKey()];
    const { organization } = await organizationWithKeys(db, [
      [a, null],
      [b, null],
    ]);
    expect((await placeHold(wrapped, request(a, "0.03"))).granted).toBe(true);
    expect((await placeHold(wrapped, request(b, "0.03"))).granted).toBe(true);
    // BYOK spends no credits: held in memory, it counts for nothing here.
    expect((await placeHold(wrapped, request(b, "5", { is_byok: true }))).granted).toBe(true);
    await setCreditLimit(wrapped, organization, 0.1);
    expect(await placeHold(wrapped, request(a, "0.05"))).toMatchObject({ granted: false, limited_by: "organization", remaining_usd: "0.04" });
    expect((await placeHold(wrapped, request(b, "0.04"))).granted).toBe(true);
    await setCreditLimit(wrapped, organization, null);
    expect((await placeHold(wrapped, request(a, "100"))).granted).toBe(true);
    expect(await rowsOf(a)).toBe(0);
  });

  it("sends the keys a budget binds to the database's check", async () => {
    const { wrapped } = counted();
    const key = newKey();
    const { organization } = await organizationWithKeys(db, [[key, null]]);
    expect((await placeHold(wrapped, request(key, "0.01"))).granted).toBe(true);
    const guardrail = `gr-${randomUUID()}`;
    await writeBudgets(wrapped, [{ guardrail_id: guardrail, organization_id: organization, limit_usd: "0.05", reset_interval: null, include_byok: false, key_hashes: [key] }]);
    // The hold in memory is the key's request in flight: it counts against the key's budget.
    expect(await placeHold(wrapped, request(key, "0.05"))).toMatchObject({ granted: false, remaining_usd: "0.04" });
    expect((await placeHold(wrapped, request(key, "0.04"))).granted).toBe(true);
    expect(await placeHold(wrapped, request(key, "0.01"))).toMatchObject({ granted: false, limited_by: "guardrail", guardrail_id: guardrail });
    expect(await rowsOf(key)).toBe(1);
  });

  it("does not trust a read of a key's binding that a change overtook", async () => {
    const { wrapped } = counted();
    const key = newKey();
    const { organization } = await organizationWithKeys(db, [[key, null]]);
    // The read of the binding is under way when the limit is set: it reads "unbound", but the change began
    // before it ended, so the hold goes to the database, which sees the limit.
    const held = placeHold(wrapped, request(key, "0.05"));
    const limited = setCreditLimit(wrapped, organization, 0.01);
    expect(await held).toMatchObject({ granted: false, limited_by: "organization" });
    await limited;
  });

  it("forgets a hold when it is charged or released, and counts what the ledger settles", async () => {
    const { wrapped } = counted();
    const key = newKey();
    const { organization } = await organizationWithKeys(db, [[key, null]]);
    const [charged, released] = [request(key, "0.5"), request(key, "0.5")];
    for (const r of [charged, released]) expect((await placeHold(wrapped, r)).granted).toBe(true);
    await setCreditLimit(wrapped, organization, 1);
    expect((await placeHold(wrapped, request(key, "0.1"))).granted).toBe(false);

    expect(await releaseHold(wrapped, released.generation_id)).toBe(true);
    expect(await releaseHold(wrapped, released.generation_id)).toBe(false);
    expect(await recordCharges(wrapped, [charge(charged, organization, "0.2")])).toBe(1);
    // $0.2 spent of $1, nothing held.
    expect(await placeHold(wrapped, request(key, "0.9"))).toMatchObject({ granted: false, remaining_usd: "0.8" });
    expect((await placeHold(wrapped, request(key, "0.8"))).granted).toBe(true);
  });
});

describe("memory holds' expiry", () => {
  it("counts expired holds for nothing, and forgets them a minute after they expire", async () => {
    let now = 1_000_000;
    const memory = new MemoryHolds(() => now);
    const key = newKey();
    await organizationWithKeys(db, [[key, null]]);
    expect(await memory.hold(db, request(key, "0.5", { ttl_ms: 1000, generation_id: "a" }))).toBe(true);
    expect(await memory.hold(db, request(key, "0.25", { ttl_ms: 120_000, generation_id: "b" }))).toBe(true);
    expect(memory.heldByKey(key, "c", false)).toBe(750_000_000_000n);
    expect(memory.heldByKey(key, "b", false)).toBe(500_000_000_000n);
    now += 1000;
    expect(memory.heldByKey(key, "c", false)).toBe(250_000_000_000n);
    expect(memory.counts()).toEqual({ active: 1, expired: 1 });
    expect(memory.dropExpired()).toBe(0);
    now += 60_001;
    expect(memory.dropExpired()).toBe(1);
    expect(memory.counts()).toEqual({ active: 1, expired: 0 });
  });
});
