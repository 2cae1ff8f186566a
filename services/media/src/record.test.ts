import { silentLogger, type Db, type EventSink, type Queryable } from "@switchyard/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { createMediaRecords, type MediaGeneration, type MediaRecords } from "./record.js";

const generation = (id: string): MediaGeneration => ({
  id,
  kind: "image",
  keyHash: "k",
  organizationId: "o",
  workspaceId: "w",
  guardrailIds: [],
  findings: [],
  broadcast: false,
  isByok: false,
  externalUser: null,
  presetId: null,
  attribution: { sessionId: null, httpReferer: null, appTitle: null, userAgent: null },
  requestId: null,
  model: "img/m",
  provider: "pixels",
  status: "completed",
  streamed: false,
  usage: { promptTokens: 0, completionTokens: 0, images: 1 },
  usageEstimated: false,
  charge: { charged: 40_000_000_000n, reported: 40_000_000_000n },
  latencyMs: 10,
  attempts: [],
});

/**
 * A database that refuses connections while `down`, hangs every transaction while `hung`, refuses the row
 * of an id in `badRows` for its data, and keeps the rows and events it committed.
 */
function database() {
  const state = { down: false, hung: false, badRows: new Set<string>(), rows: [] as string[], events: [] as string[], startedAt: new Map<string, string>() };
  const tx = (pending: { row?: string }): Queryable => ({
    async query<T extends object>(_text: string, params?: readonly unknown[]) {
      const id = String(params?.[0]);
      if (state.badRows.has(id)) throw Object.assign(new Error("numeric field overflow"), { code: "22003" });
      pending.row = id;
      return [{}] as T[];
    },
  });
  const db: Db = {
    kind: "postgres",
    query: async () => [],
    async transaction(fn) {
      if (state.hung) await new Promise(() => {});
      if (state.down) throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
      const pending: { row?: string } = {};
      const result = await fn(tx(pending));
      if (pending.row) state.rows.push(pending.row);
      return result;
    },
    ping: async () => {},
    close: async () => {},
  };
  const events: EventSink = {
    async enqueue(_tx, subject, data) {
      const { generation_id: id, started_at: startedAt } = data as { generation_id: string; started_at: string };
      state.events.push(`${subject} ${id}`);
      state.startedAt.set(id, startedAt);
    },
    insertion: () => {
      throw new Error("not used");
    },
    committed: () => {},
  };
  return { db, events, state };
}

const until = async (probe: () => boolean) => {
  for (let i = 0; !probe(); i++) {
    if (i > 500) throw new Error("condition not met");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

let records: MediaRecords | undefined;
afterEach(async () => {
  await records?.stop();
  records = undefined;
});

describe("media generation records while the database is away", () => {
  it("answers at once, keeps the record, and writes it with its event once the database is back", async () => {
    const { db, events, state } = database();
    records = createMediaRecords({ db, events, logger: silentLogger(), maxRetryMs: 20 });
    state.down = true;
    await records.write(generation("gen-1"));
    await records.write(generation("gen-2"));
    expect(records.queued()).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(state.rows).toEqual([]);
    state.down = false;
    await until(() => records!.queued() === 0);
    expect(state.rows).toEqual(["gen-1", "gen-2"]);
    expect(state.events).toEqual(["media.image.completed.v1 gen-1", "media.image.completed.v1 gen-2"]);
  });

  it("does not hold the answer while the database hangs, and writes the record when it answers", async () => {
    const { db, events, state } = database();
    records = createMediaRecords({ db, events, logger: silentLogger(), answerWaitMs: 50, stopWaitMs: 100 });
    state.hung = true;
    // Resolves although the transaction never ends.
    await records.write(generation("gen-1"));
    state.hung = false;
    // A hung transaction never ends here; a real one ends when its connection does. Either way, no record is lost on the next one.
    await records.write(generation("gen-2"));
    expect(state.rows).toEqual(["gen-2"]);
  });

  it("keeps at most its limit in memory", async () => {
    const { db, events, state } = database();
    records = createMediaRecords({ db, events, logger: silentLogger(), maxQueued: 1, maxRetryMs: 20 });
    state.down = true;
    await records.write(generation("gen-1"));
    await records.write(generation("gen-2"));
    expect(records.queued()).toBe(1);
    state.down = false;
    await until(() => records!.queued() === 0);
    expect(state.rows).toEqual(["gen-1"]);
  });

  it("drops a row the database refuses for its data, alone, and writes the others", async () => {
    const { db, events, state } = database();
    records = createMediaRecords({ db, events, logger: silentLogger(), maxRetryMs: 20 });
    state.down = true;
    for (const id of ["gen-1", "gen-2", "gen-3"]) await records.write(generation(id));
    state.badRows.add("gen-2");
    state.down = false;
    await until(() => records!.queued() === 0);
    expect(state.rows).toEqual(["gen-1", "gen-3"]);
  });

  it("dates a record that waited by when its generation ended, not by when the database came back", async () => {
    const { db, events, state } = database();
    records = createMediaRecords({ db, events, logger: silentLogger(), maxRetryMs: 20 });
    state.down = true;
    await records.write(generation("gen-1"));
    const handedOver = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 300));
    state.down = false;
    await until(() => records!.queued() === 0);
    expect(Date.parse(state.startedAt.get("gen-1")!)).toBeLessThanOrEqual(handedOver);
  });

  it("keeps a row refused while no other goes in, as the refusal may be the database's, and drops it once others do", async () => {
    const { db, events, state } = database();
    records = createMediaRecords({ db, events, logger: silentLogger(), maxRetryMs: 20 });
    state.badRows.add("gen-bad");
    await records.write(generation("gen-bad"));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(records.queued()).toBe(1);
    await records.write(generation("gen-good"));
    await until(() => records!.queued() === 0);
    expect(state.rows).toEqual(["gen-good"]);
  });

  it("writes what waits when stopped, as soon as the database is back", async () => {
    const { db, events, state } = database();
    const stopping = createMediaRecords({ db, events, logger: silentLogger(), maxRetryMs: 20 });
    state.down = true;
    await stopping.write(generation("gen-1"));
    const stopped = stopping.stop();
    setTimeout(() => (state.down = false), 100);
    await stopped;
    expect(state.rows).toEqual(["gen-1"]);
  });
});
