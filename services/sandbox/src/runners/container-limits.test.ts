import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testEnv } from "../../../../tests/support/config.js";
import { afterAll, describe, expect, it } from "vitest";
import { bubblewrapRunner } from "./bubblewrap.js";
import { measuredQuota } from "./quota.js";
import type { ContainerLimits, RunLimits } from "./types.js";

/**
 * Limits of a whole container, whatever its commands do: per-process limits are set loose here (large
 * address space and process count), so only the container's own cgroup and disk quota can stop them.
 */
const loose: RunLimits = { timeoutMs: 8000, memoryBytes: 2 * 1024 * 1024 * 1024, maxProcesses: 400, outputBytes: 16_384, fileBytes: 64 * 1024 * 1024 };
const tight: ContainerLimits = { memoryBytes: 96 * 1024 * 1024, maxProcesses: 24, cpus: 0.25, diskBytes: 1024 * 1024 };

const dirs: string[] = [];
const runners: Array<ReturnType<typeof bubblewrapRunner>> = [];
async function runnerWith(options: { quota?: "measured" } = {}) {
  const dir = await mkdtemp(join(tmpdir(), "sy-limits-"));
  dirs.push(dir);
  const made = bubblewrapRunner({ dir, uidBase: 220_000, container: tight, cgroups: "auto", ...(options.quota ? { quota: measuredQuota() } : {}) });
  runners.push(made);
  return made;
}

const runner = await runnerWith();
const why = await runner.unavailable();
const warnings = why ? [] : ((await runner.warnings?.()) ?? []);
const noCgroup = warnings.find((w) => w.includes("no cgroup"));
const noTmpfs = warnings.find((w) => w.includes("not size-limited"));
const box = { id: "limited", uidSlot: 7 };
// Each facility this machine lacks skips its tests and says why, here and in their names.
for (const reason of [why, noCgroup, noTmpfs]) if (reason) console.warn(`container limit tests skipped: ${reason}`);
const unless = (reason: string | undefined, name: string) => (reason ? `${name} (skipped: ${reason})` : name);

afterAll(async () => {
  for (const made of runners) await made.close?.();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
});

describe.skipIf(why !== undefined && !testEnv.ci)("a container's own limits", () => {
  afterAll(async () => {
    await runner.remove(box.id);
  });

  it.skipIf(noCgroup !== undefined)(unless(noCgroup, "holds several processes together to the container's memory"), async () => {
    await runner.open(box);
    // Four processes of 45 MiB each, every page touched: each alone fits in 96 MiB, together they do not.
    const hold = `python3 -c "import time; b = bytearray(45 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(2); print('held')"`;
    const result = await runner.run(box, `for i in 1 2 3 4; do ${hold} & done; wait`, loose);
    expect(result.stdout.split("\n").filter((line) => line === "held").length).toBeLessThan(4);
    expect(result.error).toMatch(/ran out of memory/);
    expect((await runner.run(box, "echo alive", loose)).stdout).toBe("alive\n");
  });

  it.skipIf(noCgroup !== undefined)(unless(noCgroup, "stops a fork bomb at the container's process limit"), async () => {
    await runner.open(box);
    const started = Date.now();
    const result = await runner.run(box, "bomb() { bomb | bomb & }; bomb; sleep 30", { ...loose, timeoutMs: 2000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    // The command ends at its timeout, or sooner when the limit leaves the shell no process for `sleep`.
    expect(result.timed_out || result.exit_code !== 0).toBe(true);
    expect(result.error).toMatch(/limit of 24 processes/);
    expect((await runner.run(box, "echo alive", loose)).stdout).toBe("alive\n");
  });

  it.skipIf(noCgroup !== undefined)(unless(noCgroup, "throttles CPU-hungry loops to the container's CPU quota"), async () => {
    await runner.open(box);
    // Two busy loops for 2 s of wall time: unthrottled they would use up to 4 s of CPU, at a quarter CPU about 0.5 s.
    const loop = "timeout 2 sh -c 'while :; do :; done'";
    const result = await runner.run(box, `${loop} & ${loop} & wait; times`, loose);
    const children = result.stdout.trim().split("\n").at(-1) ?? "";
    const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce((sum, m) => sum + Number(m[1]) * 60 + Number(m[2]), 0);
    expect(seconds).toBeGreaterThan(0.1);
    expect(seconds).toBeLessThan(1.2);
  });

  it.skipIf(noTmpfs !== undefined)(unless(noTmpfs, "fails writes past the disk quota cleanly, and works again after cleanup"), async () => {
    await runner.open(box);
    const fill = await runner.run(box, "for i in $(seq 1 600); do head -c 3000 /dev/zero > f$i || { echo failed at $i; break; }; done", loose);
    expect(fill.stdout).toMatch(/^failed at \d+$/m);
    expect(fill.stderr).toMatch(/No space left on device/);
    expect(fill.error).toMatch(/disk quota of 1 MiB/);
    // The host disk took none of it: the files the container holds stay within its quota.
    expect((await runner.files(box.id, 1000)).reduce((sum, f) => sum + f.bytes, 0)).toBeLessThanOrEqual(tight.diskBytes);
    const after = await runner.run(box, "rm -f f*; echo ok > after.txt; cat after.txt", loose);
    expect(after).toMatchObject({ exit_code: 0, stdout: "ok\n" });
    expect(after.error).toBeUndefined();
  });

  it.skipIf(noTmpfs !== undefined)(unless(noTmpfs, "keeps the files of a home made before it had a quota"), async () => {
    const upgraded = await runnerWith();
    const slot = { id: "upgraded", uidSlot: 9 };
    const home = join(dirs.at(-1)!, slot.id);
    await mkdir(home, { recursive: true });
    await writeFile(join(home, "before.txt"), "kept");
    try {
      await upgraded.open(slot);
      expect(await upgraded.run(slot, "cat before.txt; df -k . | tail -1 | awk '{print $1}'", loose)).toMatchObject({ stdout: "kepttmpfs\n" });
    } finally {
      await upgraded.remove(slot.id);
    }
  });

  it("without the right to mount, measures the home and lets a container at its quota delete but not write", async () => {
    const measured = await runnerWith({ quota: "measured" });
    const slot = { id: "measured", uidSlot: 8 };
    await measured.open(slot);
    try {
      const fill = await measured.run(slot, "for i in $(seq 1 12); do head -c 100000 /dev/zero > f$i; done; echo wrote", loose);
      // Measured between commands: this one could pass the quota, and its result says the container is full.
      expect(fill.stdout).toBe("wrote\n");
      expect(fill.error).toMatch(/whole disk quota of 1 MiB/);
      const write = await measured.run(slot, "echo more > more.txt", loose);
      expect(write.exit_code).not.toBe(0);
      expect(write.error).toMatch(/cannot write to files/);
      // Room is measured before each command: the one that deletes frees it for the next.
      expect(await measured.run(slot, "rm -f f*", loose)).toMatchObject({ exit_code: 0 });
      expect(await measured.run(slot, "echo again > again.txt && cat again.txt", loose)).toMatchObject({ exit_code: 0, stdout: "again\n" });
    } finally {
      await measured.remove(slot.id);
    }
  });
});
