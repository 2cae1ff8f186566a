import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { cloneNamespaceFlags, seccompArch, seccompFilter, seccompProgram, type SockFilter } from "./seccomp.js";
import { cloneNr, deniedCalls, firstUnreviewedNr, type SeccompArch } from "./seccomp-syscalls.js";

const audit: Record<SeccompArch, number> = { x64: 0xc000_003e, arm64: 0xc000_00b7 };
const i386 = 0x4000_0003;
const arm32 = 0x4000_0028;

/**
 * Runs a filter the way the kernel does, over the few fields of `struct seccomp_data` ours reads, for
 * the instructions it uses (load word, jeq, jge, jset, return): the aarch64 program is checked here too.
 */
function evaluate(program: SockFilter[], data: { arch: number; nr: number; arg0?: number }): number {
  let accumulator = 0;
  for (let pc = 0; pc < program.length; pc += 1) {
    const { code, jt, jf, k } = program[pc]!;
    if (code === 0x20) accumulator = k === 0 ? data.nr : k === 4 ? data.arch : k === 16 ? (data.arg0 ?? 0) >>> 0 : Number.NaN;
    else if (code === 0x06) return k >>> 0;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >>> 0 >= k >>> 0 ? jt : jf;
    else if (code === 0x45) pc += (accumulator & k) !== 0 ? jt : jf;
    else throw new Error(`instruction ${code} at ${pc} is not one this filter uses`);
    if (Number.isNaN(accumulator)) throw new Error(`instruction ${pc} loads a field this test does not know`);
  }
  throw new Error("the program ran off its end");
}

const allow = 0x7fff_0000;
const eperm = 0x0005_0001;
const enosys = 0x0005_0026;
const killProcess = 0x8000_0000;

describe.each(["x64", "arm64"] as const)("the seccomp filter for %s", (arch) => {
  const program = seccompProgram(arch);
  const run = (nr: number, arg0?: number) => evaluate(program, { arch: audit[arch], nr, ...(arg0 === undefined ? {} : { arg0 }) });

  it("refuses every denied call with its errno and allows the rest", () => {
    const denied = new Map(deniedCalls.flatMap((call) => (call.nr[arch] === undefined ? [] : [[call.nr[arch], call.errno] as const])));
    expect(denied.size).toBeGreaterThan(40);
    for (let nr = 0; nr < firstUnreviewedNr; nr += 1) {
      const errno = denied.get(nr);
      if (nr === cloneNr[arch]) continue;
      const expected = errno === undefined ? allow : errno === "EPERM" ? eperm : enosys;
      if (run(nr) !== expected) expect([nr, run(nr)]).toEqual([nr, expected]);
    }
  });

  it("answers calls past the reviewed list, and x86_64's x32 numbers, with ENOSYS", () => {
    expect(run(firstUnreviewedNr)).toBe(enosys);
    expect(run(467)).toBe(enosys); // open_tree_attr, Linux 6.15
    expect(run(0x4000_0000 + 56)).toBe(enosys);
  });

  it("allows clone for a thread or a fork, and refuses it any namespace flag", () => {
    const sigchld = 17;
    expect(run(cloneNr[arch], sigchld)).toBe(allow);
    expect(run(cloneNr[arch], 0x003d_0f00)).toBe(allow); // pthread_create's flags
    for (const flag of [0x0002_0000, 0x0200_0000, 0x0400_0000, 0x0800_0000, 0x1000_0000, 0x2000_0000, 0x4000_0000]) {
      expect(cloneNamespaceFlags & flag).toBe(flag);
      expect(run(cloneNr[arch], flag | sigchld)).toBe(eperm);
    }
  });

  it("kills a process that calls through another architecture's ABI", () => {
    for (const foreign of [i386, arm32, audit[arch === "x64" ? "arm64" : "x64"]]) expect(evaluate(program, { arch: foreign, nr: 39 })).toBe(killProcess);
  });

  it("encodes each instruction as a little-endian struct sock_filter of eight bytes", () => {
    const bytes = seccompFilter(arch);
    expect(bytes.length).toBe(program.length * 8);
    expect(program.length).toBeLessThan(4096); // BPF_MAXINSNS
    expect([bytes.readUInt16LE(0), bytes[2], bytes[3], bytes.readUInt32LE(4)]).toEqual([0x20, 0, 0, 4]);
    expect([bytes.readUInt16LE(8), bytes[10], bytes[11], bytes.readUInt32LE(12)]).toEqual([0x15, 1, 0, audit[arch]]);
    expect(bytes.readUInt32LE(bytes.length - 4)).toBe(allow);
  });
});

describe("the denied calls' numbers", () => {
  // Debian's linux-libc-dev headers; a machine without them skips rather than failing on a missing package.
  const headers: Record<SeccompArch, string> = { x64: "/usr/include/x86_64-linux-gnu/asm/unistd_64.h", arm64: "/usr/include/asm-generic/unistd.h" };
  it.each(["x64", "arm64"] as const)("match the kernel headers for %s", async (arch) => {
    const text = await readFile(headers[arch], "utf8").catch(() => undefined);
    if (text === undefined) return void console.warn(`${headers[arch]} is missing: syscall numbers not checked`);
    const numbers = new Map([...text.matchAll(/^#define __NR(?:3264)?_(\w+)\s+(\d+)\s*$/gm)].map((m) => [m[1]!, Number(m[2])]));
    for (const call of deniedCalls) expect([call.name, call.nr[arch]]).toEqual([call.name, numbers.get(call.name)]);
    expect(numbers.get("clone")).toBe(cloneNr[arch]);
  });
});

describe("the machines with a filter", () => {
  it("are little-endian x86_64 and aarch64; others get a reason, not a wrong filter", () => {
    expect(seccompArch("x64", "LE")).toBe("x64");
    expect(seccompArch("arm64", "LE")).toBe("arm64");
    expect(seccompArch("s390x", "BE")).toMatchObject({ why: expect.stringMatching(/big-endian/) });
    expect(seccompArch("riscv64", "LE")).toMatchObject({ why: expect.stringMatching(/x86_64 and aarch64 only/) });
  });
});
