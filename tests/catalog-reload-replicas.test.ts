import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv, fixtureCatalog } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startServiceProcesses, type ServiceProcesses } from "./support/service-processes.js";

let cluster: ServiceProcesses;
let file: string;

beforeAll(async () => {
  const env = await catalogEnv();
  file = env.SWITCHYARD_CONFIG!;
  cluster = await startServiceProcesses(["catalog"], env, { secondCatalog: true });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

/** The model ids the router's catalog replica lists. */
async function listed(): Promise<string[]> {
  const res = await fetch(`${cluster.apiUrl}/models?output_modalities=all`, { headers: { authorization: `Bearer ${cluster.bootstrapKey}` } });
  return ((await res.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id).sort();
}

describe("a catalog reload with two catalog replicas", () => {
  it("reloads the replica the router calls when the other one is told to reload", async () => {
    const all = fixtureCatalog.models.map((m) => m.id).sort();
    expect(await listed()).toEqual(all);
    const [kept] = fixtureCatalog.models;
    await writeFile(file, JSON.stringify({ ...fixtureCatalog, models: [kept] }));
    // SIGHUP to the replica the router does not call, as an operator's reload reaches one pod.
    cluster.secondCatalog!.child.kill("SIGHUP");
    await eventually(async () => (await listed()).length === 1, 15_000);
    expect(await listed()).toEqual([kept!.id]);
  });
});
