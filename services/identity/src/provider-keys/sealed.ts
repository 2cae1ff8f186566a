import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * AES-256-GCM under a key derived from the deployment's encryption secret, for provider keys and the
 * access-token signing keys. Each caller's context (workspace and provider, or kid) is authenticated data,
 * so a sealed value copied onto another row does not open.
 */
export function createSealer(secret: string) {
  const key = createHash("sha256").update(`switchyard provider keys\0${secret}`).digest();
  return {
    seal(plain: string, context: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(context));
      const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64");
    },
    open(sealed: string, context: string): string {
      const bytes = Buffer.from(sealed, "base64");
      const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, 12)).setAAD(Buffer.from(context));
      decipher.setAuthTag(bytes.subarray(12, 28));
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8");
    },
  };
}
export type Sealer = ReturnType<typeof createSealer>;
