import { badRequest } from "@switchyard/runtime";
import { FetchFailed, fetchBytes, type Resolve } from "@switchyard/upstream";
import type { ReferenceImage } from "../providers/types.js";

export interface ReferenceOptions {
  maxBytes: number;
  timeoutMs: number;
  /** Loopback and private addresses allowed (development only). */
  allowPrivate: boolean;
  /** Tests point a made-up hostname somewhere with this. */
  resolve?: Resolve;
}

/** The image type of the bytes by their signature; anything else is refused before a provider sees it. */
export function sniffImage(bytes: Buffer): string | undefined {
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47) return "image/png";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (bytes.length >= 12 && bytes.toString("latin1", 0, 4) === "RIFF" && bytes.toString("latin1", 8, 12) === "WEBP") return "image/webp";
  if (bytes.length >= 6 && /^GIF8[79]a$/.test(bytes.toString("latin1", 0, 6))) return "image/gif";
  return undefined;
}

const dataUrl = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/]*={0,2})$/i;

async function load(url: string, options: ReferenceOptions, deadline: number): Promise<Buffer> {
  const inline = dataUrl.exec(url);
  if (url.toLowerCase().startsWith("data:")) {
    if (!inline) throw new Error("is not a base64 image data URL");
    if ((inline[2]!.length * 3) / 4 > options.maxBytes + 2) throw new Error(`is over the ${options.maxBytes} byte limit`);
    return Buffer.from(inline[2]!, "base64");
  }
  const timeoutMs = deadline - Date.now();
  if (timeoutMs <= 0) throw new Error("could not be fetched in time");
  const { body } = await fetchBytes(url, {
    accept: "image/png, image/jpeg, image/webp, image/gif",
    allowInsecure: options.allowPrivate,
    allowHttp: true,
    maxBytes: options.maxBytes,
    timeoutMs,
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
  return body;
}

/**
 * `input_references` to image bytes: data URLs decoded, http(s) URLs fetched from public addresses only
 * (every redirect vetted, size capped, one deadline for all), each checked to be a PNG, JPEG, WebP or GIF.
 */
export async function loadReferences(urls: string[], options: ReferenceOptions): Promise<ReferenceImage[]> {
  const deadline = Date.now() + options.timeoutMs;
  return Promise.all(
    urls.map(async (url, index) => {
      const where = `input_references.${index}.image_url.url`;
      let bytes: Buffer;
      try {
        bytes = await load(url, options, deadline);
      } catch (error) {
        const reason = error instanceof FetchFailed ? error.message : `${(error as Error).message}`;
        throw badRequest(`Invalid body: ${where}: ${error instanceof FetchFailed ? `cannot be used: ${reason}` : reason}`);
      }
      if (bytes.length > options.maxBytes) throw badRequest(`Invalid body: ${where}: is over the ${options.maxBytes} byte limit`);
      const mediaType = sniffImage(bytes);
      if (!mediaType) throw badRequest(`Invalid body: ${where}: is not a PNG, JPEG, WebP or GIF image`);
      return { bytes, mediaType };
    }),
  );
}
