// The file and body shapes the recorded Claude Code cases write (test/fixtures/reference/: a case's `files`,
// a web route's `body`), made into bytes as the recorder made them: check-reference.mjs and the tests that
// play the cases build their workspaces and pages with these, so a PNG is the recorded PNG byte for byte.
import zlib from "node:zlib";

/** A template's `{n}` replaced by `n` (padded with zeros to `pad` digits). */
export const fill = (tpl, n, pad) => tpl.replaceAll("{n}", pad ? String(n).padStart(pad, "0") : String(n));

/** A `w`×`h` PNG of one colour (8-bit RGB, zlib's default compression). */
export function png(w, h, [r, g, b]) {
  const table = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const x of buf) c = table[(c ^ x) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const rows = [];
  for (let y = 0; y < h; y++) {
    const row = Buffer.alloc(1 + w * 3);
    for (let x = 0; x < w; x++) row.set([r, g, b], 1 + x * 3);
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", zlib.deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The bytes of one fixture spec: text, `content`, `base64`, `hex`, `json`, `lines`, `repeat` or `png`. */
export function fixtureBytes(spec) {
  if (typeof spec === "string") return Buffer.from(spec);
  if (spec.content !== undefined) return Buffer.from(spec.content);
  if (spec.base64 !== undefined) return Buffer.from(spec.base64, "base64");
  if (spec.hex !== undefined) return Buffer.from(spec.hex.replace(/\s+/g, ""), "hex");
  if (spec.json !== undefined) return Buffer.from(JSON.stringify(spec.json, null, 2) + "\n");
  if (spec.lines) {
    const { count, template = "line {n}", eol = "\n", trailing = true, start = 1, pad } = spec.lines;
    const a = [];
    for (let i = start; i < start + count; i++) a.push(fill(template, i, pad));
    return Buffer.from(a.join(eol) + (trailing ? eol : ""));
  }
  if (spec.repeat)
    return Buffer.from(
      (spec.prefix || "") + spec.repeat.text.repeat(spec.repeat.count) + (spec.suffix || ""),
    );
  if (spec.png) return png(spec.png.width || 2, spec.png.height || 2, spec.png.rgb || [255, 0, 0]);
  throw new Error("unknown fixture " + JSON.stringify(spec).slice(0, 100));
}
