// A pull request's conversation as github.com shows it, drawn locally for the README's picture: the title,
// then each post's Markdown rendered by micromark with GFM (the CommonMark parser GitHub's renderer follows),
// styled after GitHub's light theme. One self-contained page: no network, no external CSS or font.
import { micromark } from "micromark";
import { gfm, gfmHtml } from "micromark-extension-gfm";

export interface ThreadPost {
  author: string;
  /** "bot" adds GitHub's label after the name. */
  bot?: boolean;
  /** What the header says after the name ("commented", "opened this pull request"). */
  action: string;
  markdown: string;
}

export interface ThreadPage {
  title: string;
  number: number;
  author: string;
  base: string;
  head: string;
  commits: number;
  files: number;
  posts: ThreadPost[];
}

const escape = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c);

/** Markdown to HTML as GitHub renders a comment: GFM tables, fences, autolinks; its allowed raw HTML kept. */
export function renderGitHubMarkdown(markdown: string): string {
  return micromark(markdown, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
}

const STYLE = `
:root { --fg: #1f2328; --muted: #59636e; --border: #d1d9e0; --canvas-subtle: #f6f8fa; --accent: #0969da;
  --sans: "Liberation Sans", Arial, "Noto Color Emoji", sans-serif;
  --mono: "Liberation Mono", "DejaVu Sans Mono", "Noto Color Emoji", monospace; }
* { box-sizing: border-box; }
html, body { margin: 0; background: #fff; }
body { font: 14px/1.5 var(--sans); color: var(--fg); }
#thread { width: 960px; padding: 24px 32px 8px; }
h1.title { font-size: 28px; font-weight: 400; margin: 0 0 8px; line-height: 1.25; }
h1.title .number { color: var(--muted); font-weight: 300; }
h1.title code { font: 85% var(--mono); background: #818b981f; border-radius: 6px; padding: .2em .4em; }
.meta { display: flex; align-items: center; gap: 8px; color: var(--muted); padding-bottom: 16px;
  border-bottom: 1px solid var(--border); margin-bottom: 16px; }
.state { display: inline-flex; align-items: center; gap: 4px; background: #1f883d; color: #fff; font-weight: 500;
  border-radius: 2em; padding: 5px 12px; }
.meta b { color: var(--fg); font-weight: 600; }
.branch { font: 12px var(--mono); color: var(--accent); background: #ddf4ff; border-radius: 6px; padding: 2px 6px; }
.tabs { display: flex; gap: 4px; border-bottom: 1px solid var(--border); margin: -16px 0 24px; }
.tabs > span { padding: 8px 16px; color: var(--muted); }
.tabs > span.on { color: var(--fg); font-weight: 600; border-bottom: 2px solid #fd8c73; }
.counter { display: inline-block; min-width: 20px; padding: 0 6px; font-size: 12px; line-height: 18px;
  text-align: center; background: #818b981f; border-radius: 2em; margin-left: 4px; font-weight: 500; }
.post { display: flex; gap: 16px; margin-bottom: 20px; }
.avatar { flex: none; width: 40px; height: 40px; border-radius: 50%; background: #2088ff; }
.avatar svg { display: block; }
.box { flex: 1; min-width: 0; border: 1px solid var(--border); border-radius: 6px; }
.box > header { background: var(--canvas-subtle); border-bottom: 1px solid var(--border); padding: 8px 16px;
  border-radius: 6px 6px 0 0; color: var(--muted); }
.box > header b { color: var(--fg); }
.label { border: 1px solid var(--border); border-radius: 2em; font-size: 12px; padding: 0 7px; margin: 0 4px; }
.markdown-body { padding: 16px; overflow-wrap: break-word; }
.markdown-body > :first-child { margin-top: 0 !important; }
.markdown-body > :last-child { margin-bottom: 0 !important; }
.markdown-body p, .markdown-body ul, .markdown-body table, .markdown-body pre, .markdown-body details,
.markdown-body blockquote { margin: 0 0 16px; }
.markdown-body h3 { font-size: 20px; margin: 24px 0 16px; font-weight: 600; line-height: 1.25; }
.markdown-body h4 { font-size: 16px; margin: 24px 0 16px; font-weight: 600; line-height: 1.25; }
.markdown-body ul { padding-left: 2em; }
.markdown-body a { color: var(--accent); text-decoration: none; }
.markdown-body code { font: 85% var(--mono); background: #818b981f; border-radius: 6px; padding: .2em .4em; }
.markdown-body pre { font: 85%/1.45 var(--mono); background: var(--canvas-subtle); border-radius: 6px;
  padding: 16px; overflow: hidden; white-space: pre-wrap; }
.markdown-body pre code { background: none; padding: 0; font-size: 100%; }
.markdown-body table { border-collapse: collapse; display: block; width: max-content; max-width: 100%; overflow: hidden; }
.markdown-body th, .markdown-body td { border: 1px solid var(--border); padding: 6px 13px; }
.markdown-body th { font-weight: 600; }
.markdown-body tr:nth-child(2n) { background: var(--canvas-subtle); }
.markdown-body details summary { cursor: pointer; }
.markdown-body sub { font-size: 12px; color: var(--muted); }
`;

/** The Actions bot's avatar: GitHub Actions' mark, drawn inline. */
const AVATAR = `<div class="avatar"><svg width="40" height="40" viewBox="0 0 40 40" aria-hidden="true"><circle cx="15" cy="20" r="5" fill="none" stroke="#fff" stroke-width="2.5"/><path d="M20 20h6m0 0-3-3m3 3-3 3" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round"/></svg></div>`;

function post(p: ThreadPost): string {
  return `<div class="post">${AVATAR}<div class="box"><header><b>${escape(p.author)}</b>${p.bot ? '<span class="label">bot</span>' : " "}${escape(p.action)}</header><div class="markdown-body">${renderGitHubMarkdown(p.markdown)}</div></div></div>`;
}

/** A title as GitHub shows it: text, with \`code\` spans. */
const titleHtml = (title: string) => escape(title).replace(/`([^`]+)`/g, "<code>$1</code>");

/** The whole page; the thread is the element `#thread`, sized to its content. */
export function threadPageHtml(page: ThreadPage): string {
  const commits = `${page.commits} commit${page.commits === 1 ? "" : "s"}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(page.title)}</title><style>${STYLE}</style></head>
<body><main id="thread">
<h1 class="title">${titleHtml(page.title)} <span class="number">#${page.number}</span></h1>
<div class="meta"><span class="state">Open</span><span><b>${escape(page.author)}</b> wants to merge ${commits} into <span class="branch">${escape(page.base)}</span> from <span class="branch">${escape(page.head)}</span></span></div>
<nav class="tabs"><span class="on">Conversation<span class="counter">${page.posts.length - 1}</span></span><span>Commits<span class="counter">${page.commits}</span></span><span>Checks</span><span>Files changed<span class="counter">${page.files}</span></span></nav>
${page.posts.map(post).join("\n")}
</main></body></html>
`;
}
