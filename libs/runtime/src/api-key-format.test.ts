import { describe, expect, it } from "vitest";
import { classifySecret, generateSecret, hashSecret, keyPrefix, maskSecret } from "./api-key-format.js";

describe("key secrets", () => {
  it("generates prefixed keys with 256 random bits and a valid checksum", () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a.startsWith(keyPrefix)).toBe(true);
    expect(a).toHaveLength(keyPrefix.length + 64 + 8);
    expect(a).not.toBe(b);
    expect(classifySecret(a)).toBe("valid");
  });

  it("rejects a key whose checksum does not match", () => {
    const key = generateSecret();
    const flipped = key.slice(0, 20) + (key[20] === "a" ? "b" : "a") + key.slice(21);
    expect(classifySecret(flipped)).toBe("malformed");
    expect(classifySecret(`${keyPrefix}abc`)).toBe("malformed");
    expect(classifySecret(key.toUpperCase().replace("SK-SY-V1-", keyPrefix))).toBe("malformed");
  });

  it("treats operator secrets of 32+ characters as foreign and shorter ones as malformed", () => {
    expect(classifySecret("x".repeat(32))).toBe("foreign");
    expect(classifySecret("short")).toBe("malformed");
  });

  it("hashes with SHA-256 hex and masks without revealing the secret", () => {
    expect(hashSecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const key = generateSecret();
    const label = maskSecret(key);
    expect(label.startsWith(`${keyPrefix}${key.slice(9, 12)}...`)).toBe(true);
    expect(label.length).toBeLessThan(20);
  });
});
