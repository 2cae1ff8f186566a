import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectCgroups } from "./cgroups.js";

// Folders standing in for cgroup filesystems: the files the driver writes are the kernel's interface.
const root = await mkdtemp(join(tmpdir(), "sy-cgroups-"));
afterAll(() => rm(root, { recursive: true, force: true }));
const limits = { memoryBytes: 96 * 1024 * 1024, maxProcesses: 24, cpus: 0.5, diskBytes: 1024 };
const read = (path: string) => readFile(path, "utf8");

describe("cgroup drivers", () => {
  it("uses cgroup v2 when it has the memory and pids controllers, below this process's own cgroup", async () => {
    const mount = join(root, "v2");
    const own = join(mount, "kubepods", "pod-1");
    await mkdir(own, { recursive: true });
    await writeFile(join(own, "cgroup.controllers"), "cpuset cpu io memory pids\n");
    const found = await detectCgroups("switchyard-test", {
      mountinfo: `30 23 0:26 / ${mount} rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n`,
      selfCgroup: "0::/kubepods/pod-1\n",
      pid: 4242,
    });
    if (!("driver" in found)) throw new Error(found.why);
    const { driver } = found;
    expect(driver.version).toBe(2);
    const parent = join(own, "switchyard-test");
    expect((await read(join(own, "cgroup.subtree_control"))).split(" ").sort()).toEqual(["+cpu", "+memory", "+pids"]);
    // A kernel with swap accounting shows memory.swap.max in every cgroup.
    await mkdir(join(parent, "box"), { recursive: true });
    await writeFile(join(parent, "box", "memory.swap.max"), "max");
    await driver.create("box", limits);
    expect(await read(join(parent, "box", "memory.max"))).toBe(String(96 * 1024 * 1024));
    expect(await read(join(parent, "box", "memory.swap.max"))).toBe("0");
    expect(await read(join(parent, "box", "pids.max"))).toBe("24");
    expect(await read(join(parent, "box", "cpu.max"))).toBe("50000 100000");
    expect(driver.procsFiles("box")).toEqual([join(parent, "box", "cgroup.procs")]);
    await writeFile(join(parent, "box", "memory.events"), "low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n");
    await writeFile(join(parent, "box", "pids.events"), "max 17\n");
    expect(await driver.events("box")).toEqual({ oomKills: 2, forkRefusals: 17 });
  });

  it("uses cgroup v1 hierarchies, one per controller, cpu shared with cpuacct", async () => {
    const base = join(root, "v1");
    const mounts = ["memory", "pids", "cpu,cpuacct"].map((name, i) => `${40 + i} 31 0:${30 + i} / ${join(base, name)} rw,relatime - cgroup cgroup rw,${name}`);
    for (const name of ["memory/job-7", "pids", "cpu,cpuacct"]) await mkdir(join(base, name), { recursive: true });
    const found = await detectCgroups("switchyard-test", {
      mountinfo: `${mounts.join("\n")}\n41 31 0:38 / ${join(base, "unified")} rw,relatime - cgroup2 cgroup2 rw\n`,
      selfCgroup: "8:pids:/\n4:memory:/job-7\n2:cpu,cpuacct:/\n0::/\n",
      pid: 4242,
    });
    if (!("driver" in found)) throw new Error(found.why);
    const { driver } = found;
    expect(driver.version).toBe(1);
    const memory = join(base, "memory", "job-7", "switchyard-test", "box");
    await mkdir(memory, { recursive: true });
    await writeFile(join(memory, "memory.memsw.limit_in_bytes"), "9223372036854771712");
    await driver.create("box", limits);
    expect(await read(join(memory, "memory.limit_in_bytes"))).toBe(String(96 * 1024 * 1024));
    expect(await read(join(memory, "memory.memsw.limit_in_bytes"))).toBe(String(96 * 1024 * 1024));
    expect(await read(join(base, "pids", "switchyard-test", "box", "pids.max"))).toBe("24");
    expect(await read(join(base, "cpu,cpuacct", "switchyard-test", "box", "cpu.cfs_quota_us"))).toBe("50000");
    expect(driver.procsFiles("box")).toEqual([
      join(memory, "cgroup.procs"),
      join(base, "pids", "switchyard-test", "box", "cgroup.procs"),
      join(base, "cpu,cpuacct", "switchyard-test", "box", "cgroup.procs"),
    ]);
  });

  it("says why when neither is there", async () => {
    const found = await detectCgroups("switchyard-test", { mountinfo: "", selfCgroup: "0::/\n", pid: 1 });
    expect(found).toEqual({ why: expect.stringMatching(/no cgroup v2 .* nor cgroup v1/) });
  });
});
