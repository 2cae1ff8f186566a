/**
 * A mono PCM WAV of `samples` samples at `rate` Hz: 16-bit (or 8-bit) silence, or `sample(i)` for each
 * 16-bit sample. `declared` is the data length its header states, the real one unless a test lies.
 */
export function pcmWav(rate: number, samples: number, options: { bits?: 8 | 16; declared?: number; sample?: (i: number) => number } = {}): Buffer {
  const width = (options.bits ?? 16) / 8;
  const declared = options.declared ?? samples * width;
  const bytes = Buffer.alloc(44 + samples * width, width === 1 ? 0x80 : 0);
  bytes.write("RIFF", 0, "latin1");
  bytes.writeUInt32LE(Math.min(36 + declared, 0xffffffff), 4);
  bytes.write("WAVEfmt ", 8, "latin1");
  bytes.writeUInt32LE(16, 16);
  bytes.writeUInt16LE(1, 20);
  bytes.writeUInt16LE(1, 22);
  bytes.writeUInt32LE(rate, 24);
  bytes.writeUInt32LE(rate * width, 28);
  bytes.writeUInt16LE(width, 32);
  bytes.writeUInt16LE(width * 8, 34);
  bytes.write("data", 36, "latin1");
  bytes.writeUInt32LE(declared, 40);
  if (options.sample && width === 2) for (let i = 0; i < samples; i++) bytes.writeInt16LE(options.sample(i), 44 + i * 2);
  return bytes;
}
