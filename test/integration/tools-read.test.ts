// Read through the pipeline over a real sandbox: numbered lines, windows, notices, content blocks, and
// every kind of file that is not plain UTF-8 text, without ever changing the file it reads.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_READ_OUTPUT_CHARS } from "../../src/tools/read.js";
import { resultOf, startHarness, textOf, type ToolHarness } from "../support/tool-harness.js";

const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP4z8DwnwGMgRQAH+4D/dJQfRoAAAAASUVORK5CYII=";
const PDF =
  "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";
const NOTEBOOK = JSON.stringify({
  cells: [
    { cell_type: "markdown", source: ["# Title\n", "Some text"] },
    { cell_type: "code", source: "print(1 + 1)", outputs: [{ text: ["2\n"] }] },
  ],
  metadata: {},
  nbformat: 4,
  nbformat_minor: 5,
});
const lines = (n: number, make: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => make(i + 1)).join("\n") + "\n";

const FILES = {
  "a.txt": "hello\nworld\n",
  "twenty.txt": lines(20, (i) => `line ${i}`),
  "empty.txt": "",
  "sub/inner.txt": "inner\n",
  "long.txt": lines(2500, (i) => `row ${i}`),
  "wide.txt": `short\n${"x".repeat(3000)}\nafter\n`,
  "img.png": Buffer.from(PNG_BASE64, "base64"),
  "doc.pdf": PDF,
  "nb.ipynb": NOTEBOOK,
  "ids.ipynb": JSON.stringify({
    cells: [
      { cell_type: "markdown", id: "intro", metadata: {}, source: "Notes" },
      {
        cell_type: "code",
        id: "run",
        metadata: {},
        source: ["1 / 0"],
        outputs: [
          {
            output_type: "error",
            ename: "DivideError",
            evalue: "integer division error",
            traceback: ["frame 1", "frame 2"],
          },
          {
            output_type: "display_data",
            data: { "image/png": `${PNG_BASE64.slice(0, 20)}\n${PNG_BASE64.slice(20)}` },
          },
        ],
      },
    ],
    metadata: { language_info: { name: "julia" } },
    nbformat: 4,
    nbformat_minor: 5,
  }),
  "big-out.ipynb": JSON.stringify({
    cells: [
      {
        cell_type: "code",
        id: "c1",
        source: 'print("x" * 20000)',
        outputs: [{ output_type: "stream", name: "stdout", text: "x".repeat(20_000) }],
      },
    ],
    metadata: {},
    nbformat: 4,
    nbformat_minor: 5,
  }),
  "blob.bin": Buffer.from([1, 2, 3, 4]),
  "nul.txt": Buffer.from("text\0with\0nul bytes\n"),
  "crlf.txt": "first\r\nsecond\r\n",
  "bom.txt": "\uFEFFwith bom\nsecond\n",
  "tabs.txt": "\tindented\n\t\tdeeper\nmixed \t tab\n",
  "latin1.txt": Buffer.from("caf\xe9 cr\xe8me\n", "latin1"),
  "no-newline.txt": "last line",
  "one-mb-line.txt": "y".repeat(1024 * 1024),
};

describe("Read (real sandbox)", () => {
  let h: ToolHarness;
  const fileSha = async (p: string) => (await h.sh(`sha256sum -- '${p}' | cut -d' ' -f1`)).trim();

  beforeAll(async () => {
    h = await startHarness(FILES);
    // Files too big to ship from the host: made inside the container (~54 MB of numbered lines, and 50 MB of wide lines).
    await h.sh(
      "seq 1 7000000 > big.txt && yes \"$(printf 'w%.0s' $(seq 1 999))\" | head -n 52000 > wide-big.txt && " +
        "head -c 20000000 /dev/zero | tr '\\0' z > huge-line.txt && yes 'é€' | head -n 3000000 > multibyte-big.txt && " +
        "(printf 'HDR\\0'; head -c 20000000 /dev/zero | tr '\\0' a) > big-blob",
    );
  });
  afterAll(async () => {
    await h?.dispose();
  });

  it("numbers lines from 1 with a tab, the final newline showing as an empty last line", async () => {
    const r = await h.call("Read", { file_path: "/workspace/a.txt" });
    expect(resultOf(r)).toEqual({ isError: false, text: "1\thello\n2\tworld\n3\t" });
    expect(r.stage).toBe("call");
  });

  it("resolves a relative path against the working directory", async () => {
    const r = await h.call("Read", { file_path: "a.txt" });
    expect(resultOf(r)).toEqual({ isError: false, text: "1\thello\n2\tworld\n3\t" });
  });

  it("reads a window with offset and limit", async () => {
    const r = await h.call("Read", { file_path: "/workspace/twenty.txt", offset: 5, limit: 3 });
    expect(resultOf(r)).toEqual({ isError: false, text: "5\tline 5\n6\tline 6\n7\tline 7" });
  });

  it("reads from the start with offset 0, as Claude Code does", async () => {
    const r = await h.call("Read", { file_path: "/workspace/twenty.txt", offset: 0, limit: 2 });
    expect(resultOf(r)).toEqual({ isError: false, text: "1\tline 1\n2\tline 2" });
  });

  it("coerces numeric strings for offset and limit", async () => {
    const r = await h.call("Read", { file_path: "/workspace/twenty.txt", offset: "19", limit: "5" });
    expect(resultOf(r)).toEqual({ isError: false, text: "19\tline 19\n20\tline 20\n21\t" });
  });

  it("says so when the offset is past the end, without an error", async () => {
    const r = await h.call("Read", { file_path: "/workspace/twenty.txt", offset: 500 });
    expect(r.isError).toBe(false);
    expect(textOf(r)).toMatch(/shorter than the provided offset \(500\)\. The file has 21 lines/);
  });

  it("gives the empty-file notice for a 0-byte file", async () => {
    const r = await h.call("Read", { file_path: "/workspace/empty.txt" });
    expect(resultOf(r)).toEqual({
      isError: false,
      text: "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
    });
  });

  it("refuses a directory with EISDIR", async () => {
    const r = await h.call("Read", { file_path: "/workspace/sub" });
    expect(resultOf(r)).toEqual({
      isError: true,
      text: "EISDIR: illegal operation on a directory, read '/workspace/sub'",
    });
  });

  it("says a missing file does not exist and names the working directory", async () => {
    const r = await h.call("Read", { file_path: "/workspace/presnt.txt" });
    expect(resultOf(r)).toEqual({
      isError: true,
      text: "File does not exist. Note: your current working directory is /workspace.",
    });
    expect(r.errorKind).toBe("not_found");
  });

  it("shows 2,000 lines by default and tells how to read the rest", async () => {
    const r = await h.call("Read", { file_path: "/workspace/long.txt" });
    const text = textOf(r);
    expect(r.isError).toBe(false);
    expect(text.startsWith("1\trow 1\n2\trow 2\n")).toBe(true);
    expect(text).toContain("\n2000\trow 2000\n<system-reminder>");
    expect(text).not.toContain("row 2001");
    expect(text).toMatch(/Showing lines 1-2000 of 2501\. Use offset and limit/);
  });

  it("cuts lines longer than 2,000 characters and says so", async () => {
    const r = await h.call("Read", { file_path: "/workspace/wide.txt" });
    const [first, second, third] = textOf(r).split("\n");
    expect(first).toBe("1\tshort");
    expect(second).toBe(`2\t${"x".repeat(2000)}… [line cut at 2000 characters]`);
    expect(third).toBe("3\tafter");
  });

  it("returns a 1 MB single line cut to 2,000 characters", async () => {
    const r = await h.call("Read", { file_path: "/workspace/one-mb-line.txt" });
    expect(r.isError).toBe(false);
    expect(textOf(r)).toBe(`1\t${"y".repeat(2000)}… [line cut at 2000 characters]`);
  });

  it("returns a PNG as an image block", async () => {
    const r = await h.call("Read", { file_path: "/workspace/img.png" });
    expect(r.isError).toBe(false);
    expect(r.content).toEqual([
      { type: "image", source: { type: "base64", data: PNG_BASE64, media_type: "image/png" } },
    ]);
  });

  it("returns a PDF as a document block", async () => {
    const r = await h.call("Read", { file_path: "/workspace/doc.pdf" });
    expect(r.isError).toBe(false);
    expect(r.content).toEqual([
      {
        type: "document",
        source: { type: "base64", data: Buffer.from(PDF).toString("base64"), media_type: "application/pdf" },
      },
    ]);
  });

  it("returns a notebook without cell ids as cell-N cells with their outputs, in Claude Code's shape", async () => {
    const r = await h.call("Read", { file_path: "/workspace/nb.ipynb" });
    expect(r.isError).toBe(false);
    expect(r.content).toEqual([
      {
        type: "text",
        text: '<cell id="cell-0"><cell_type>markdown</cell_type># Title\nSome text</cell id="cell-0">\n<cell id="cell-1">print(1 + 1)</cell id="cell-1">\n\n2\n',
      },
    ]);
  });

  it("shows a notebook's own cell ids, its language, error outputs and images", async () => {
    const r = await h.call("Read", { file_path: "/workspace/ids.ipynb" });
    expect(r.isError).toBe(false);
    expect(r.content).toEqual([
      {
        type: "text",
        text:
          '<cell id="intro"><cell_type>markdown</cell_type>Notes</cell id="intro">\n' +
          '<cell id="run"><language>julia</language>1 / 0</cell id="run">\n\nDivideError: integer division error\nframe 1\nframe 2',
      },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
    ]);
  });

  it("reads a notebook whose outputs are too large for one cell, pointing at them instead", async () => {
    const r = await h.call("Read", { file_path: "/workspace/big-out.ipynb" });
    expect(resultOf(r)).toEqual({
      isError: false,
      text: `<cell id="c1">print("x" * 20000)</cell id="c1">\n\nOutputs are too large to include. Use Bash with: jq '.cells[0].outputs' '/workspace/big-out.ipynb'`,
    });
  });

  it("refuses a file with a binary extension", async () => {
    const r = await h.call("Read", { file_path: "/workspace/blob.bin" });
    expect(r.isError).toBe(true);
    expect(r.errorKind).toBe("binary_file");
    expect(textOf(r)).toMatch(
      /^<tool_use_error>This tool cannot read binary files\. The file appears to be a binary \.bin file/,
    );
  });

  it("refuses a text-named file with NUL bytes as binary, giving its size", async () => {
    const r = await h.call("Read", { file_path: "/workspace/nul.txt" });
    expect(r.isError).toBe(true);
    expect(r.errorKind).toBe("binary_file");
    expect(textOf(r)).toContain("binary (20 bytes, it contains NUL bytes)");
  });

  it("shows CRLF lines without the CR, and leaves the file as it was", async () => {
    const before = await fileSha("crlf.txt");
    const r = await h.call("Read", { file_path: "/workspace/crlf.txt" });
    expect(resultOf(r)).toEqual({ isError: false, text: "1\tfirst\n2\tsecond\n3\t" });
    expect(await fileSha("crlf.txt")).toBe(before);
  });

  it("hides a UTF-8 BOM in the display but keeps it in the file", async () => {
    const r = await h.call("Read", { file_path: "/workspace/bom.txt" });
    expect(resultOf(r)).toEqual({ isError: false, text: "1\twith bom\n2\tsecond\n3\t" });
    expect(await h.sh("head -c 3 bom.txt | od -An -tx1")).toMatch(/ef bb bf/);
  });

  it("keeps tabs as they are after the line-number tab", async () => {
    const r = await h.call("Read", { file_path: "/workspace/tabs.txt" });
    expect(textOf(r)).toBe("1\t\tindented\n2\t\t\tdeeper\n3\tmixed \t tab\n4\t");
  });

  it("shows non-UTF-8 bytes as replacement characters and leaves the file as it was", async () => {
    const before = await fileSha("latin1.txt");
    const r = await h.call("Read", { file_path: "/workspace/latin1.txt" });
    expect(r.isError).toBe(false);
    expect(textOf(r)).toBe("1\tcaf\uFFFD cr\uFFFDme\n2\t");
    expect(await fileSha("latin1.txt")).toBe(before);
  });

  it("reads a file without a final newline as it is", async () => {
    const r = await h.call("Read", { file_path: "/workspace/no-newline.txt" });
    expect(textOf(r)).toBe("1\tlast line");
  });

  it("gives a bounded window of a 50 MB file, with a note, and any window by offset", async () => {
    const first = await h.call("Read", { file_path: "/workspace/big.txt" });
    expect(first.isError).toBe(false);
    const text = textOf(first);
    expect(text.startsWith("1\t1\n2\t2\n")).toBe(true);
    expect(text).toContain("\n2000\t2000\n<system-reminder>");
    expect(text).not.toContain("2001\t2001");
    expect(text).toMatch(/The file is \d+ bytes; this shows lines 1-2000/);
    expect(text.length).toBeLessThan(40_000);

    const middle = await h.call("Read", { file_path: "/workspace/big.txt", offset: 3_000_000, limit: 3 });
    expect(textOf(middle).split("\n").slice(0, 3)).toEqual([
      "3000000\t3000000",
      "3000001\t3000001",
      "3000002\t3000002",
    ]);
  });

  it("keeps a window of a 50 MB file with wide lines under the one-Read output cap", async () => {
    const r = await h.call("Read", { file_path: "/workspace/wide-big.txt" });
    // 2,000 lines of 1,000 characters would be ~2 MB for the model: refused or cut, never sent whole.
    expect(textOf(r).length).toBeLessThanOrEqual(MAX_READ_OUTPUT_CHARS + 1000);
    if (r.isError) expect(textOf(r)).toMatch(/offset and limit/);
    const narrow = await h.call("Read", { file_path: "/workspace/wide-big.txt", offset: 51_999, limit: 2 });
    expect(narrow.isError).toBe(false);
    expect(textOf(narrow)).toMatch(/^51999\tw{999}\n52000\tw{999}/);
  });

  it("cuts a 20 MB single line (over the whole-read size) to 2,000 characters", async () => {
    const r = await h.call("Read", { file_path: "/workspace/huge-line.txt" });
    expect(r.isError).toBe(false);
    expect(textOf(r).split("\n")[0]).toBe(`1\t${"z".repeat(2000)}… [line cut at 2000 characters]`);
  });

  it("decodes characters split across the chunks of a big file whole", async () => {
    // "é€\n" is 6 bytes: the 4 MiB chunk boundary falls inside line 699051's characters.
    const r = await h.call("Read", { file_path: "/workspace/multibyte-big.txt", offset: 699_049, limit: 5 });
    expect(textOf(r).split("\n").slice(0, 5)).toEqual([
      "699049\té€",
      "699050\té€",
      "699051\té€",
      "699052\té€",
      "699053\té€",
    ]);
    expect(textOf(r)).not.toContain("\uFFFD");
  });

  it("refuses a big binary file without an extension instead of showing a window of it", async () => {
    const r = await h.call("Read", { file_path: "/workspace/big-blob" });
    expect(r.isError).toBe(true);
    expect(r.errorKind).toBe("binary_file");
    expect(textOf(r)).toContain("binary (20000004 bytes, it contains NUL bytes)");
  });

  it("gives the offset-past-end notice for a big file too", async () => {
    const r = await h.call("Read", { file_path: "/workspace/big.txt", offset: 9_000_000 });
    expect(resultOf(r)).toEqual({
      isError: false,
      text: "<system-reminder>Warning: the file exists but is shorter than the provided offset (9000000). The file has 7000001 lines.</system-reminder>",
    });
  });

  it("reads ten files in one turn in parallel, results in the calls' order", async () => {
    const names = [
      "a.txt",
      "twenty.txt",
      "crlf.txt",
      "tabs.txt",
      "no-newline.txt",
      "a.txt",
      "bom.txt",
      "missing.txt",
      "sub",
      "empty.txt",
    ];
    const records = await h.turn(
      names.map((n) => ({ name: "Read", input: { file_path: `/workspace/${n}` } })),
    );
    expect(records.map((r) => r.index)).toEqual(names.map((_, i) => i));
    expect(textOf(records[0]!)).toBe("1\thello\n2\tworld\n3\t");
    expect(textOf(records[4]!)).toBe("1\tlast line");
    expect(records[7]!.isError).toBe(true);
    expect(records[8]!.errorKind).toBe("is_directory");
    expect(records.filter((r) => r.isError).length).toBe(2);
  });

  it("records the read for read-before-edit, keyed by the container path", async () => {
    await h.call("Read", { file_path: "/workspace/twenty.txt" });
    expect(h.state.reads.get("/workspace/twenty.txt")).toMatchObject({
      size: Buffer.byteLength(FILES["twenty.txt"]),
    });
  });

  it("refuses a FIFO rather than hanging on it", async () => {
    await h.sh("mkfifo pipe");
    const r = await h.call("Read", { file_path: "/workspace/pipe" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/not a regular file/);
  });

  it("answers bad input with a schema error and reads nothing", async () => {
    const cases: unknown[] = [
      {},
      { file_path: ["/workspace/a.txt"] },
      { file_path: "/workspace/a.txt", limit: -1 },
      { file_path: "/workspace/a.txt", offset: -1 },
      { file_path: "/workspace/a.txt", offset: 1e30 },
      { file_path: "/workspace/a.txt", extra: true },
    ];
    for (const input of cases) {
      const r = await h.call("Read", input);
      expect(r.stage, JSON.stringify(input)).toBe("parse");
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/^<tool_use_error>InputValidationError: Read failed/);
    }
  });
});
