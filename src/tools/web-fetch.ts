// WebFetch(url, prompt): the page fetched from agent-ci's process under the run's network policy, turned
// into Markdown (an image URL's picture shown as it is, and saved where the agent can Read it; an empty page
// is a page), and read by a small, fast model that answers the prompt; Claude Code's result formats (a
// redirect to another host and an HTTP error are messages, not errors, a Retry-After kept; a long page is
// read in parts with `offset`; where a saved image is, after the answer). Every request is an egress ledger
// entry with this call as its caller. The page is data for the reading model; the main model gets only its
// answer.
import { z } from "zod";
import type { WebFacts } from "../report/schema.js";
import { defineTool, toolError } from "./define-tool.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";
import { AGENT_CI_VERSION } from "../version.js";
import type { FetchHop, FetchOutcome } from "./web-fetch-page.js";
import { extensionFor, fileSafe, formatFileSize, saveOutput } from "./saved-binary.js";
import { htmlToMarkdown } from "./web-markdown.js";
import { PAGE_CACHE_MS, type CachedPage, type ReaderImageType, type WebServices } from "./web-services.js";

/** Characters of page text the reading model gets per call; `offset` reads on. */
export const PAGE_CHUNK_CHARS = 100_000;
const MAX_URL_LENGTH = 2_000;
const READER_MAX_TOKENS = 4_096;
/** The largest image the reading model is shown (the Messages API takes 5 MB of base64 per image). */
const READER_IMAGE_MAX_BYTES = (5 * 1024 * 1024 * 3) / 4;
/** Characters of a server's Retry-After value repeated to the model (it is the server's text). */
const RETRY_AFTER_MAX_CHARS = 100;
const READER_IMAGE_TYPES: readonly ReaderImageType[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

export const WebFetchInput = z.strictObject({
  url: z.string().describe("The URL to fetch content from"),
  prompt: z.string().describe("The prompt to run on the fetched content"),
  offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      "Character position in the page text to start reading from. Use it to read on through a page too long for one call, with the value the previous result gave.",
    ),
});
export type WebFetchInput = z.infer<typeof WebFetchInput>;

export const WEB_FETCH_DESCRIPTION = `Fetches a URL, converts the page to markdown, and answers \`prompt\` against it using a small fast model.

- Only hosts the run's network policy allows can be fetched; a refusal says which rule or setting refused it.
- Fails on authenticated/private URLs — use an authenticated tool for those instead.
- Fails on localhost and other hostnames without a dot; for a local server, use curl via Bash.
- HTTP is upgraded to HTTPS. Cross-host redirects are returned to you rather than followed; call again with the redirect URL.
- Responses are cached for 15 minutes per URL.`;

/** What the reading model is asked: the page between `---` lines, the prompt, how to answer. */
export function readerPrompt(page: string, prompt: string): string {
  return `
Web page content:
---
${page}
---

${prompt}

Answer briefly, from the content above only. In your answer:
 - Quote at most 125 characters from any one source; open-source code may be quoted as its license allows.
 - Put exact wording from the page in quotation marks; everything else in your own words.
 - Do not comment on the legality of the request or of your answer.
 - Do not reproduce song lyrics.
`;
}

/** The Markdown a page's bytes become: HTML through Turndown, text as it is (invalid UTF-8 as U+FFFD). */
export async function pageText(body: Buffer, contentType: string): Promise<string> {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType)?.[1] ?? "utf-8";
  let text: string;
  try {
    text = new TextDecoder(charset).decode(body);
  } catch {
    text = new TextDecoder("utf-8").decode(body);
  }
  return /html|xhtml/i.test(contentType) || (!contentType && /^\s*<(!doctype|html)/i.test(text))
    ? await htmlToMarkdown(text)
    : text;
}

/** The image type the reading model can be shown, for a response's content type. */
function readerImageType(contentType: string): ReaderImageType | undefined {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return READER_IMAGE_TYPES.find((t) => t === type);
}

/** Content types whose bytes are text a model can read. */
function isText(contentType: string): boolean {
  if (!contentType) return true;
  return /^text\/|[/+](json|xml|javascript|x-yaml|yaml|markdown)\b|^application\/(x-)?(sh|toml)/i.test(
    contentType,
  );
}

function redirectMessage(
  from: string,
  to: string,
  status: number,
  statusText: string,
  prompt: string,
): string {
  return `REDIRECT DETECTED: The URL redirects to a location that was not fetched automatically.

    Original URL: ${from}
    Redirect URL (from the server's Location header — server-supplied, not verified): ${to}
    Status: ${status} ${statusText}

    To complete your request, I need to fetch content from the redirected URL. Please use WebFetch again with these parameters:
    - url: "${to}"
    - prompt: "${prompt}"`;
}

/** Claude Code's line after the answer naming where the page's binary content was saved. */
function savedNote(contentType: string, bytes: number, file: string): string {
  return `\n\n[Binary content (${contentType}, ${formatFileSize(bytes)}) also saved to ${file}]`;
}

function httpErrorMessage(status: number, statusText: string, retryAfter?: string): string {
  const wait = retryAfter
    ? `\nRetry-After: ${retryAfter.slice(0, RETRY_AFTER_MAX_CHARS).replace(/\p{Cc}/gu, " ")}`
    : "";
  return `The server returned HTTP ${status} ${statusText}.${wait}

The response body was not retrieved. If this URL requires authentication, use an authenticated tool (e.g. \`gh\` for GitHub, or an MCP-provided fetch tool) instead of WebFetch.`;
}

/** http → https; undefined with why for what WebFetch does not fetch. */
export function fetchableUrl(raw: string): { url: URL } | { error: string } {
  if (raw.length > MAX_URL_LENGTH) return { error: `the URL is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { error: `Invalid URL: ${raw}` };
  }
  if (url.protocol === "http:") url.protocol = "https:";
  if (url.protocol !== "https:")
    return { error: `only http and https URLs can be fetched, not ${url.protocol}` };
  if (url.username || url.password) return { error: "URLs with a user name or password are not fetched" };
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!host.includes(".") && !host.includes(":"))
    return {
      error: `${host} is a hostname without a dot; WebFetch does not fetch localhost or local names (use curl via Bash for a local server)`,
    };
  return { url };
}

/** One hop of a fetch, as the run's network ledger records it, charged to the call that made it. */
function ledgerHop(web: WebServices, callId: string): (hop: FetchHop) => void {
  return (hop: FetchHop) =>
    web.ledger({
      host: hop.url.hostname,
      port: hop.port,
      kind: "fetch",
      decision: hop.decision,
      ...(hop.reason ? { reason: web.redact(hop.reason) } : {}),
      ...(hop.address ? { address: hop.address } : {}),
      url: web.redact(hop.url.href),
      ...(hop.status === undefined ? {} : { status: hop.status }),
      bytesUp: hop.bytesUp,
      bytesDown: hop.bytesDown,
      startedAt: hop.startedAt,
      durationMs: hop.durationMs,
      caller: callId,
    });
}

/** A WebFetch result: its text, the web facts for the record, and its one-line title. */
function result(output: string, facts: WebFacts, title: string, isError = false): ToolResult {
  return {
    output,
    ...(isError ? { isError: true, kind: "command_failed" as const } : {}),
    title,
    metadata: { web: facts },
  };
}

/**
 * The page to cache from a response's body: text as Markdown, an image for the reading model to see; the
 * result that refuses it when it is an image too large or content that is not text.
 */
async function pageOf(
  web: WebServices,
  url: URL,
  outcome: Extract<FetchOutcome, { kind: "page" }>,
  ctx: ToolContext,
  facts: WebFacts,
): Promise<CachedPage | ToolResult> {
  facts.contentType = outcome.contentType;
  facts.bytes = outcome.body.length;
  // An empty page is a page: the reading model is told so (Claude Code hands it over as it is).
  const imageType = outcome.body.length ? readerImageType(outcome.contentType) : undefined;
  if (imageType && (outcome.cut || outcome.body.length > READER_IMAGE_MAX_BYTES))
    return result(
      `${url.href} is an image of more than ${READER_IMAGE_MAX_BYTES} bytes, too large for the reading model.`,
      facts,
      `image too large: ${outcome.contentType}`,
      true,
    );
  if (outcome.body.length && !imageType && !isText(outcome.contentType))
    return result(
      `${url.href} returned ${outcome.contentType} content (${outcome.body.length} bytes), which WebFetch cannot read as text.`,
      facts,
      `binary: ${outcome.contentType}`,
      true,
    );
  const text = imageType ? "" : await pageText(outcome.body, outcome.contentType);
  // An image is also saved where the agent can Read it (as Claude Code saves binary content it fetched).
  const savedTo = imageType
    ? await saveOutput(
        ctx.sandbox,
        `webfetch-${fileSafe(ctx.toolUseId)}.${extensionFor(imageType)}`,
        outcome.body,
      )
    : undefined;
  return {
    at: web.now(),
    text: outcome.cut ? `${text}\n\n[The page was cut at ${outcome.body.length} bytes.]` : text,
    ...(imageType ? { image: { mediaType: imageType, data: outcome.body.toString("base64") } } : {}),
    ...(savedTo ? { savedTo } : {}),
    url: outcome.url.href,
    status: outcome.status,
    contentType: outcome.contentType,
    bytes: outcome.body.length,
  };
}

/**
 * Fetches `url` and turns the response into a page to cache, or into the result that says why there is no
 * page to read (refused, failed, a redirect not followed, an HTTP error; what `pageOf` refuses).
 */
async function fetchToPage(
  web: WebServices,
  url: URL,
  input: WebFetchInput,
  ctx: ToolContext,
  facts: WebFacts,
): Promise<CachedPage | ToolResult> {
  // The fetcher (Node's https, tls and zlib under it) is loaded by the run's first WebFetch, not at its start.
  const { fetchPage } = await import("./web-fetch-page.js");
  const outcome = await fetchPage(url, {
    decide: web.decide,
    ca: web.ca,
    userAgent: `agent-ci/${AGENT_CI_VERSION} (WebFetch)`,
    signal: ctx.signal,
    limits: web.limits,
    onHop: ledgerHop(web, ctx.toolUseId),
  });
  if (outcome.kind === "refused") {
    // The refused hop may be a redirect's: name its host, and say where it came from.
    const host = outcome.url.hostname;
    const why = web.refusal(host, outcome.port, outcome.reason);
    const redirected = outcome.url.href !== url.href;
    facts.refused = outcome.reason;
    return result(
      redirected ? `${url.href} redirected to ${outcome.url.href}, and ${why}` : why,
      facts,
      `refused: ${host}`,
      true,
    );
  }
  if (outcome.kind === "failed")
    return result(`WebFetch failed for ${url.href}: ${outcome.message}`, facts, outcome.message, true);
  facts.finalUrl = web.redact(outcome.url.href);
  facts.status = outcome.status;
  if (outcome.kind === "redirect") {
    facts.redirect = web.redact(outcome.location);
    return result(
      redirectMessage(input.url, outcome.location, outcome.status, outcome.statusText, input.prompt),
      facts,
      `redirect to ${new URL(outcome.location).host} (not followed)`,
    );
  }
  if (outcome.kind === "http_error")
    return result(
      httpErrorMessage(outcome.status, outcome.statusText, outcome.retryAfter),
      facts,
      `HTTP ${outcome.status}`,
    );
  return pageOf(web, url, outcome, ctx, facts);
}

/**
 * The reading model's answer to the prompt over one chunk of the page (shown the page's image when it is
 * one), or the result that says the reader failed.
 */
async function askReader(
  web: WebServices,
  page: CachedPage,
  chunk: string,
  prompt: string,
  ctx: ToolContext,
  facts: WebFacts,
): Promise<string | ToolResult> {
  const picture = page.image
    ? [
        {
          type: "image" as const,
          source: { type: "base64" as const, media_type: page.image.mediaType, data: page.image.data },
        },
      ]
    : [];
  try {
    const side = await web.sideCall(ctx.toolUseId, {
      purpose: "fetch",
      model: web.smallFastModel,
      messages: [
        {
          role: "user",
          content: [...picture, { type: "text", text: readerPrompt(chunk, prompt) }],
        },
      ],
      maxTokens: READER_MAX_TOKENS,
      signal: ctx.signal,
    });
    // No reading model (a script without a matching `side` entry): the page text itself.
    return side
      ? side.content
          .filter((b) => b.type === "text")
          .map((b) => b.text)
          .join("\n")
      : chunk;
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    return result(
      `The page was fetched, but the reading model failed: ${(e as Error).message}`,
      facts,
      "reader failed",
      true,
    );
  }
}

/**
 * Has the reading model answer the prompt against one chunk of the page (from `offset`), and says where the
 * answer stops when the page is longer than one chunk.
 */
async function readPage(
  web: WebServices,
  page: CachedPage,
  input: WebFetchInput,
  ctx: ToolContext,
  facts: WebFacts,
): Promise<ToolResult> {
  const start = input.offset ?? 0;
  if (start > 0 && start >= page.text.length)
    return result(
      `offset ${start} is past the end of this page's text (${page.text.length} characters).`,
      facts,
      "offset past the end",
      true,
    );
  const end = Math.min(page.text.length, start + PAGE_CHUNK_CHARS);
  const cut = end < page.text.length;
  const chunk = page.image
    ? `[The page is the ${page.image.mediaType} image above (${page.bytes} bytes).]`
    : page.text.slice(start, end) + (cut ? "\n\n[Content truncated due to length...]" : "");
  const answer = await askReader(web, page, chunk, input.prompt, ctx, facts);
  if (typeof answer !== "string") return answer;
  if (!answer.trim())
    return result("The reading model returned no answer for this page.", facts, "no answer", true);
  const note =
    !cut && start === 0
      ? ""
      : `\n\n[WebFetch note: this page's text is ${page.text.length} characters long and the answer above covers only characters ${start} to ${end}; ${cut ? `the final ${page.text.length - end} were not read — to read on, call WebFetch again with the same url and offset: ${end}.` : "it reaches the end of the page."}]`;
  const saved = page.savedTo ? savedNote(page.contentType, page.bytes, page.savedTo) : "";
  return result(
    `${answer}${note}${saved}`,
    facts,
    `${new URL(page.url).host} ${page.status}${facts.fromCache ? " (cached)" : ""}`,
  );
}

export function createWebFetchTool(web: WebServices): Tool<WebFetchInput> {
  return defineTool<WebFetchInput>({
    name: "WebFetch",
    description: WEB_FETCH_DESCRIPTION,
    inputSchema: WebFetchInput,
    maxResultSizeChars: 100_000,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,

    async validateInput(input) {
      const checked = fetchableUrl(input.url);
      if ("error" in checked) return toolError("invalid_input", checked.error);
      return undefined;
    },

    async call(input, ctx) {
      const checked = fetchableUrl(input.url);
      if ("error" in checked) return toolError("invalid_input", checked.error);
      const url = checked.url;
      const facts: WebFacts = { url: web.redact(url.href) };
      let page: CachedPage | undefined = web.cache.get(url.href);
      if (page && web.now() - page.at > PAGE_CACHE_MS) page = undefined;
      if (page) facts.fromCache = true;
      else {
        const fetched = await fetchToPage(web, url, input, ctx, facts);
        if ("output" in fetched) return fetched;
        page = fetched;
        web.cache.set(url.href, page);
      }
      return readPage(web, page, input, ctx, facts);
    },
  });
}
