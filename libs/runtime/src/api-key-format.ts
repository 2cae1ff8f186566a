import { hash, randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";

/** Recognisable prefix: secret scanners and humans can tell a Switchyard key at a glance. */
export const keyPrefix = "sk-sy-v1-";
const body = /^[0-9a-f]{64}$/;
const checksum = /^[0-9a-f]{8}$/;

const checksumOf = (randomHex: string) => crc32(randomHex).toString(16).padStart(8, "0");

/** 256 random bits, hex encoded, with a CRC-32 so a mistyped key is refused without a query. */
export function generateSecret(): string {
  const random = randomBytes(32).toString("hex");
  return `${keyPrefix}${random}${checksumOf(random)}`;
}

/**
 * `valid`: a well-formed Switchyard key; `malformed`: carries our prefix but fails the checksum, or is
 * too short to be any key; `foreign`: an operator-chosen secret (the bootstrap key) that can only be
 * checked by looking it up.
 */
export function classifySecret(secret: string): "valid" | "malformed" | "foreign" {
  if (secret.startsWith(keyPrefix)) {
    const rest = secret.slice(keyPrefix.length);
    const random = rest.slice(0, 64);
    const sum = rest.slice(64);
    if (rest.length !== 72 || !body.test(random) || !checksum.test(sum)) return "malformed";
    return checksumOf(random) === sum ? "valid" : "malformed";
  }
  return secret.length >= 32 && secret.length <= 512 ? "foreign" : "malformed";
}

/** Only the SHA-256 hex digest is stored; it is also the key's public `hash`. */
export const hashSecret = (secret: string): string => hash("sha256", secret, "hex");

/** A masked form that identifies the key to its owner without revealing it. */
export function maskSecret(secret: string): string {
  const head = secret.startsWith(keyPrefix) ? keyPrefix.length + 3 : 3;
  return `${secret.slice(0, head)}...${secret.slice(-3)}`;
}
