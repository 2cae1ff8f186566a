import { describe, expect, it } from "vitest";
import { readEmbeddingsReply } from "./reply.js";

/** The answer's bytes in chunks of seven, as a socket may cut them: through markers, vectors and characters. */
function chunked(text: string): Buffer[] {
  const bytes = Buffer.from(text, "utf8");
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 7) chunks.push(bytes.subarray(at, at + 7));
  return chunks;
}
const read = (text: string) => readEmbeddingsReply(chunked(text));

describe("readEmbeddingsReply", () => {
  it("reads a plain answer's vectors back into their places, whatever the order of keys and items", () => {
    const text =
      '{"object":"list","data":[{"object":"embedding","index":1,"embedding":"AACAPw=="},' +
      '{"embedding":"AAAAQA==","index":0,"object":"embedding"}],"model":"m","usage":{"prompt_tokens":3,"total_tokens":3}}';
    expect(read(text)).toEqual({ json: JSON.parse(text), plain: true });
  });

  it("leaves every other string as it is, digits and empty ones included", () => {
    const text = '{"id":"0","data":[{"embedding":""},{"embedding":[1,2]},{"embedding":"1"}],"note":"embedding"}';
    expect(read(text)).toEqual({ json: JSON.parse(text), plain: true });
  });

  it("keeps the last of a duplicated key, as JSON.parse does", () => {
    const text = '{"data":[{"embedding":"AACAPw==","embedding":"AAAAQA=="}]}';
    expect(read(text)).toEqual({ json: { data: [{ embedding: "AAAAQA==" }] }, plain: true });
  });

  it("reads an embedding string written with spaces around its colon as it is", () => {
    const text = '{"data":[{"embedding":"AACAPw=="},{"embedding" : "AAAAQA=="},{"embedding": "7"}]}';
    expect(read(text)).toEqual({ json: JSON.parse(text), plain: true });
  });

  it("parses an answer with escapes or non-ASCII text whole, and says it is not plain", () => {
    const escaped = '{"data":[{"embedding":"AACAPw=="}],"model":"a\\"b"}';
    expect(read(escaped)).toEqual({ json: JSON.parse(escaped), plain: false });
    const accented = '{"data":[{"embedding":"AACAPw=="}],"model":"modèle"}';
    expect(read(accented)).toEqual({ json: JSON.parse(accented), plain: false });
  });

  it("reads an answer without string vectors whole", () => {
    expect(read('{"data":[{"embedding":[0.5,-1]}]}')).toEqual({ json: { data: [{ embedding: [0.5, -1] }] }, plain: true });
  });

  it("reads text that is not JSON, or is cut off, as no JSON", () => {
    expect(read('{"data":[{"embedding":"AACAPw==').json).toBeUndefined();
    expect(read('{"data":[{"embedding":"AACAPw=="}]').json).toBeUndefined();
    expect(read('{"a":"x"embedding":"AACAPw=="}').json).toBeUndefined();
    expect(read("not json").json).toBeUndefined();
    expect(readEmbeddingsReply(undefined)).toEqual({ json: undefined, plain: false });
  });

  it("reads an answer in one chunk as it reads one in many", () => {
    const text = '{"data":[{"embedding":"AACAPw=="},{"embedding":"AAAAQA=="}],"model":"m"}';
    expect(readEmbeddingsReply([Buffer.from(text)])).toEqual({ json: JSON.parse(text), plain: true });
  });
});
