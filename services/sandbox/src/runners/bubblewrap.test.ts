import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testEnv } from "../../../../tests/support/config.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bubblewrapRunner } from "./bubblewrap.js";
import { cloneNr, deniedCalls } from "./seccomp-syscalls.js";
import type { RunLimits } from "./types.js";

const limits: RunLimits = { timeoutMs: 5000, memoryBytes: 512 * 1024 * 1024, maxProcesses: 32, outputBytes: 8192, fileBytes: 1024 * 1024 };
const dir = await mkdtemp(join(tmpdir(), "sy-bwrap-"));
const runner = bubblewrapRunner({ dir, uidBase: 210_000, container: { memoryBytes: 1024 * 1024 * 1024, maxProcesses: 64, cpus: 1, diskBytes: 64 * 1024 * 1024 }, cgroups: "auto" });
const boxA = { id: "box-a", uidSlot: 1 };
const boxB = { id: "box-b", uidSlot: 2 };
const why = await runner.unavailable();

/** Processes of this machine whose command line has `marker`. */
async function processesWith(marker: string): Promise<number> {
  let found = 0;
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmdline.split("\0").includes(marker)) found += 1;
  }
  return found;
}

const arch = process.arch === "arm64" ? "arm64" : "x64";
const nr = (name: string) => (name === "clone" ? cloneNr[arch] : deniedCalls.find((call) => call.name === name)!.nr[arch]!);
/**
 * Makes each call straight through libc's syscall(), so no tool's own checks stand in for the kernel's,
 * and prints its name and `ok` or the errno. Arguments are harmless where a call is allowed.
 */
const syscalls = `
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(name, nr, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if result == 0 and name == "clone":
        os._exit(0)
    if result > 0 and name == "clone":
        os.waitpid(result, 0)
    print(name, "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()])
call("unshare", ${nr("unshare")}, 0)
call("setns", ${nr("setns")}, -1, 0)
call("clone", ${nr("clone")}, 0x10000000 | 17, 0, 0, 0, 0)
call("clone3", ${nr("clone3")}, 0, 0)
call("fsopen", ${nr("fsopen")}, b"tmpfs", 0)
call("ptrace", ${nr("ptrace")}, 0, 0, 0, 0)
call("process_vm_readv", ${nr("process_vm_readv")}, os.getpid(), 0, 0, 0, 0, 0)
call("keyctl", ${nr("keyctl")}, 0, -3, 1)
call("bpf", ${nr("bpf")}, 5, 0, 0)
call("perf_event_open", ${nr("perf_event_open")}, 0, 0, -1, -1, 0)
call("io_uring_setup", ${nr("io_uring_setup")}, 0, 0)
call("userfaultfd", ${nr("userfaultfd")}, 1)
call("init_module", ${nr("init_module")}, 0, 0, b"")
pid = os.fork()
if pid == 0:
    os._exit(7)
print("fork", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
`;

// CI installs bubblewrap; a laptop without it skips these rather than failing on a missing package.
describe.skipIf(why !== undefined && !testEnv.ci)("bubblewrap sandbox", () => {
  beforeAll(async () => {
    expect(why).toBeUndefined();
    await runner.open(boxA);
    await runner.open(boxB);
  });
  afterAll(async () => {
    await runner.remove(boxA.id);
    await runner.remove(boxB.id);
    await runner.close?.();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs a command in the container's home and keeps its files between commands", async () => {
    const first = await runner.run(boxA, "mkdir -p out && printf 'hello' > out/greeting.txt && pwd && id -un", limits);
    expect(first).toMatchObject({ exit_code: 0, timed_out: false, truncated: false, stdout: "/home/sandbox\nsandbox\n" });
    const second = await runner.run(boxA, "cat out/greeting.txt; exit 3", limits);
    expect(second).toMatchObject({ exit_code: 3, stdout: "hello" });
    expect(await runner.files("box-a", 100)).toEqual([expect.objectContaining({ path: "out/greeting.txt", bytes: 5 })]);
    expect((await runner.read("box-a", "out/greeting.txt")).toString()).toBe("hello");
  });

  it("has no network but its own loopback", async () => {
    const result = await runner.run(boxA, "ip -o link 2>/dev/null | cut -d: -f2; (exec 3<>/dev/tcp/127.0.0.1/5432) 2>&1 || echo refused; getent hosts example.com || echo no-dns", { ...limits, timeoutMs: 3000 });
    expect(result.stdout).not.toMatch(/eth|ens|veth/);
    expect(result.stdout).toContain("no-dns");
    const curl = await runner.run(boxA, "python3 -c \"import socket; s=socket.socket(); s.settimeout(2); s.connect(('127.0.0.1', 5432))\"", limits);
    expect(curl.exit_code).not.toBe(0);
    expect(curl.stderr).toMatch(/Connection refused|unreachable/i);
  });

  it("cannot read the host's files or another container's", async () => {
    await runner.run(boxB, "echo secret > mine.txt", limits);
    process.env.SANDBOX_TEST_SECRET = "host-secret-value";
    const result = await runner.run(boxA, `ls /root /etc/shadow ${dir}/box-b /home 2>&1; cat /proc/*/environ 2>&1 | tr '\\0' ' '; env`, limits);
    delete process.env.SANDBOX_TEST_SECRET;
    expect(result.stdout).not.toContain("mine.txt");
    expect(result.stdout).toMatch(/No such file/);
    // No process of the sandbox, bwrap's own included, carries the host's environment.
    expect(result.stdout).not.toContain("host-secret-value");
    const write = await runner.run(boxA, "touch /usr/evil 2>&1; echo done", limits);
    expect(write.stdout).toMatch(/Read-only file system/);
  });

  it("refuses nested user namespaces, mounts, tracing, keys and BPF through its seccomp filter", async () => {
    const nested = await runner.run(boxA, "unshare -Ur id; unshare -Urm sh -c 'mount -t tmpfs none /tmp && echo mounted'; grep Seccomp: /proc/self/status", limits);
    expect(nested.stdout).not.toMatch(/uid=0|mounted/);
    expect(nested.stderr).toMatch(/unshare failed: Operation not permitted/);
    expect(nested.stdout).toMatch(/^Seccomp:\s+2$/m);
    const calls = await runner.run(boxA, `python3 -c '${syscalls}'`, limits);
    expect(calls.stderr).toBe("");
    expect(Object.fromEntries(calls.stdout.trim().split("\n").map((line) => line.split(" ")))).toEqual({
      unshare: "EPERM",
      setns: "EPERM",
      clone: "EPERM",
      clone3: "ENOSYS",
      fsopen: "ENOSYS",
      ptrace: "EPERM",
      process_vm_readv: "EPERM",
      keyctl: "EPERM",
      bpf: "EPERM",
      perf_event_open: "EPERM",
      io_uring_setup: "EPERM",
      userfaultfd: "EPERM",
      init_module: "EPERM",
      fork: "7",
    });
    // Ordinary programs, threads (clone without namespace flags) included, still run.
    const ordinary = await runner.run(boxA, "ls / >/dev/null && python3 -c 'import threading; t = threading.Thread(target=print, args=(\"thread\",)); t.start(); t.join()' && echo done | sed s/done/sed/", limits);
    expect(ordinary).toMatchObject({ exit_code: 0, stdout: "thread\nsed\n" });
  });

  it("shows in /proc only the container's own processes, and nothing of the host", async () => {
    const result = await runner.run(boxA, "ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '; echo; cat /proc/cmdline; echo '|'; for f in cmdline environ; do tr '\\0' ' ' < /proc/1/$f; echo; done", limits);
    expect(result.stderr).toBe("");
    const [pids, bootArguments, cmdline, environ] = result.stdout.split("\n");
    // bwrap's reaper, the shell, and the pipeline's own processes: nothing of the host's.
    expect(pids!.trim().split(" ").map(Number).every((pid) => pid > 0 && pid < 10)).toBe(true);
    expect(bootArguments).toBe("|");
    for (const text of [cmdline!, environ!]) {
      expect(text).not.toContain(dir);
      expect(text).not.toContain(process.cwd());
    }
    expect(cmdline).toMatch(/^bwrap --args 3 -- prlimit /);
    expect(environ).toMatch(/^PATH=\S+ (PWD=\/ )?$/);
    // The files bwrap writes in are not binds of host files, whose host paths mountinfo would show.
    const files = await runner.run(boxA, "grep -E ' /(etc/passwd|etc/group|proc/cmdline) ' /proc/self/mountinfo; id; ls -l /etc/passwd", limits);
    expect(files.stdout.split("\n").filter((line) => line.includes("/etc/") || line.includes("/proc/"))).toHaveLength(4);
    expect(files.stdout).not.toContain(dir);
    expect(files.stdout).toMatch(/uid=1000\(sandbox\) gid=1000\(sandbox\)/);
    expect(files.stdout).toMatch(/^-r--r--r-- .* \/etc\/passwd$/m);
  });

  it("ends a fork bomb at the process limit and the time limit", async () => {
    const started = Date.now();
    const result = await runner.run(boxA, "bomb() { bomb | bomb & }; bomb; sleep 30", { ...limits, timeoutMs: 2000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.timed_out).toBe(true);
    expect(result.error).toMatch(/timed out after 2000 ms/);
    // The machine still runs commands afterwards: nothing of the bomb survived its sandbox.
    expect((await runner.run(boxA, "echo alive", limits)).stdout).toBe("alive\n");
  });

  it("kills a runaway command at its time limit", async () => {
    const result = await runner.run(boxA, "while :; do :; done", { ...limits, timeoutMs: 1000 });
    expect(result).toMatchObject({ exit_code: null, timed_out: true });
  });

  it("keeps only the first bytes of a huge output", async () => {
    const result = await runner.run(boxA, "head -c 50000000 /dev/zero | tr '\\0' 'x'; echo err >&2", limits);
    expect(result.stdout.length).toBe(8192);
    expect(result.truncated).toBe(true);
    expect(result.stderr).toBe("err\n");
  });

  it("refuses a file past the size limit and memory past the address-space limit", async () => {
    const big = await runner.run(boxA, "head -c 2000000 /dev/zero > big.bin; echo $?; stat -c %s big.bin", limits);
    expect(big.stdout.trim().split("\n").pop()).toBe(String(1024 * 1024));
    const memory = await runner.run(boxA, "python3 -c \"b = bytearray(900 * 1024 * 1024)\"", limits);
    expect(memory.exit_code).not.toBe(0);
    expect(memory.stderr).toMatch(/MemoryError/);
  });

  it("runs each container as the host user of its own slot", async () => {
    await runner.run(boxA, "echo a > owner.txt", limits);
    await runner.run(boxB, "echo b > owner.txt", limits);
    const owners = [(await stat(join(dir, "box-a", "owner.txt"))).uid, (await stat(join(dir, "box-b", "owner.txt"))).uid];
    expect(owners).toEqual(process.getuid?.() === 0 ? [210_001, 210_002] : [process.getuid?.(), process.getuid?.()]);
  });

  it("kills a command and everything it started when its caller goes away", async () => {
    const abandoned = new AbortController();
    setTimeout(() => abandoned.abort(), 300);
    const started = Date.now();
    const result = await runner.run(boxA, "sleep 31.5 & sleep 31.5; echo never", limits, abandoned.signal);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result).toMatchObject({ exit_code: null, timed_out: false, stdout: "" });
    expect(result.error).toMatch(/cancelled/);
    const deadline = Date.now() + 3000;
    while ((await processesWith("31.5")) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await processesWith("31.5")).toBe(0);
  });

  it("keeps the containers of two databases apart on one machine, whatever their ids", async () => {
    const container = { memoryBytes: 256 * 1024 * 1024, maxProcesses: 32, cpus: 1, diskBytes: 8 * 1024 * 1024 };
    const [one, two] = ["aaaa", "bbbb"].map((instance) => bubblewrapRunner({ dir, instance, uidBase: 210_000, container, cgroups: "auto" }));
    const slot = { id: "sess_same", uidSlot: 5 };
    try {
      await one!.open(slot);
      await two!.open(slot);
      await one!.run(slot, "echo one > whose.txt", limits);
      expect((await two!.run(slot, "cat whose.txt 2>&1 || echo none", limits)).stdout).toMatch(/No such file|none/);
    } finally {
      await one!.remove(slot.id);
      await two!.remove(slot.id);
      await one!.close?.();
      await two!.close?.();
    }
  });
});
