import busboy from "busboy";
import { badRequest, HttpError } from "./errors.js";
import type { Request } from "express";

export interface MultipartUpload {
  /** Text fields; a name sent more than once (`timestamp_granularities[]`) becomes an array. */
  fields: Record<string, string | string[]>;
  file: { bytes: Buffer; filename: string | undefined } | undefined;
}

const tooLarge = (limit: number) => new HttpError("payload_too_large", `Request payload too large: the file may be at most ${limit} bytes`);

/**
 * Reads a multipart upload with one file part named `file` as it arrives: the part is counted while it
 * streams and the request is refused with 413 the moment it passes `maxFileBytes`, without buffering the rest.
 */
export function readMultipart(req: Request, maxFileBytes: number): Promise<MultipartUpload> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // Names and values are UTF-8, as browsers, fetch and the SDKs send them (busboy reads Latin-1 by default).
      parser = busboy({
        headers: req.headers,
        defParamCharset: "utf8",
        limits: { fileSize: maxFileBytes, files: 1, fields: 50, fieldSize: 64 * 1024, parts: 60 },
      });
    } catch (error) {
      return reject(badRequest(`Invalid multipart body: ${(error as Error).message}`));
    }
    const fields: MultipartUpload["fields"] = {};
    let file: MultipartUpload["file"];
    let failed = false;
    const fail = (error: HttpError) => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      req.resume();
      reject(error);
    };
    parser.on("field", (name, value, info) => {
      if (info.valueTruncated) return fail(badRequest(`Invalid multipart body: field ${name} is too long`));
      const seen = fields[name];
      fields[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
    });
    const invalid = (error: Error) => fail(badRequest(`Invalid multipart body: ${error.message}`));
    parser.on("file", (name, stream, info) => {
      // A form cut inside a part fails the part's stream too; unheard, that error would end the process.
      stream.on("error", invalid);
      if (name !== "file") {
        stream.resume();
        return fail(badRequest(`Invalid multipart body: unexpected file part ${name}; send the file as file`));
      }
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("limit", () => fail(tooLarge(maxFileBytes)));
      stream.on("end", () => {
        if (!failed) file = { bytes: Buffer.concat(chunks), filename: info.filename };
      });
    });
    parser.on("filesLimit", () => fail(badRequest("Invalid multipart body: send exactly one file part")));
    parser.on("fieldsLimit", () => fail(badRequest("Invalid multipart body: too many fields")));
    parser.on("partsLimit", () => fail(badRequest("Invalid multipart body: too many parts")));
    parser.on("error", invalid);
    parser.on("close", () => {
      if (!failed) resolve({ fields, file });
    });
    req.on("aborted", () => fail(badRequest("The upload was cut off")));
    req.pipe(parser);
  });
}
