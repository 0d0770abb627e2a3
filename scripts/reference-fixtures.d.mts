/** A template's `{n}` replaced by `n` (padded with zeros to `pad` digits). */
export function fill(tpl: string, n: number, pad?: number): string;
/** A `w`×`h` PNG of one colour (8-bit RGB, zlib's default compression). */
export function png(w: number, h: number, rgb: [number, number, number]): Buffer;
/** The bytes of one fixture spec, as the recorded cases write it (a string, or an object of one shape). */
export function fixtureBytes(spec: unknown): Buffer;
