/** Signatures of the types people upload, checked against the bytes rather than trusting the client. */
const signatures: Array<[type: string, test: (b: Buffer) => boolean]> = [
  ["application/pdf", (b) => b.toString("latin1", 0, 5) === "%PDF-"],
  ["image/png", (b) => b.length >= 8 && b.readUInt32BE(0) === 0x89504e47],
  ["image/jpeg", (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ["image/gif", (b) => /^GIF8[79]a$/.test(b.toString("latin1", 0, 6))],
  ["image/webp", (b) => b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP"],
  ["audio/wav", (b) => b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WAVE"],
  ["audio/mpeg", (b) => b.toString("latin1", 0, 3) === "ID3"],
  ["audio/flac", (b) => b.toString("latin1", 0, 4) === "fLaC"],
  ["audio/ogg", (b) => b.toString("latin1", 0, 4) === "OggS"],
  ["video/mp4", (b) => b.toString("latin1", 4, 8) === "ftyp"],
  ["application/gzip", (b) => b[0] === 0x1f && b[1] === 0x8b],
  ["application/zip", (b) => b.toString("latin1", 0, 4) === "PK\x03\x04"],
];

/** Text types by extension, for bytes that are valid UTF-8 without control characters. */
const textTypes: Record<string, string> = {
  json: "application/json",
  jsonl: "application/jsonl",
  csv: "text/csv",
  md: "text/markdown",
  html: "text/html",
  xml: "application/xml",
  yaml: "application/yaml",
  yml: "application/yaml",
};

/** C0 control characters other than tab, newline, form feed and carriage return. */
const isControl = (code: number) => code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d;

export const hasControlCharacters = (text: string): boolean => [...text].some((c) => c.charCodeAt(0) < 0x20);

function isText(bytes: Buffer): boolean {
  const sample = bytes.subarray(0, 8192);
  if (sample.some(isControl)) return false;
  // A cut in the middle of a multi-byte character at the end of the sample is still text.
  return !new TextDecoder("utf-8", { fatal: false }).decode(sample).slice(0, -1).includes("\uFFFD");
}

/** The file's type from its content; the name only refines text (`.csv`, `.json`...). */
export function sniffType(bytes: Buffer, filename: string): string {
  for (const [type, test] of signatures) if (bytes.length >= 4 && test(bytes)) return type;
  if (bytes.length === 0 || isText(bytes)) {
    const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase() ?? "";
    return textTypes[extension] ?? "text/plain";
  }
  return "application/octet-stream";
}
