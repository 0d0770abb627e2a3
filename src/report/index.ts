// The run report's public API: the versioned report.json contract, redaction, patch stats, and the Markdown
// and HTML renderings with their atomic writer.
export {
  REPORT_SCHEMA_VERSION,
  RESULT_PREVIEW_MAX_CHARS,
  TURN_TEXT_MAX_CHARS,
  EXIT_REASONS,
  OUTCOMES,
  RUN_PHASES,
  NODE_SOURCES,
  Hardening,
  RunReport,
  ReportSchemaError,
  deriveOutcome,
  parseReport,
  reportJsonSchema,
} from "./schema.js";
export type {
  Attempt,
  CallPatch,
  Compaction,
  Decision,
  Denial,
  EnforcedRule,
  ExitReason,
  Outcome,
  PatchFile,
  PatchHunk,
  Phase,
  PatchSummary,
  PolicyRule,
  ReportPolicy,
  ResumedFrom,
  RunPhaseName,
  RunReportInput,
  SecretFinding,
  Subagent,
  TokenUsage,
  ToolCall,
  Turn,
  Verify,
  Warning,
  WebFacts,
  SideCall,
  EgressConnection,
} from "./schema.js";
export { ModelContextRecord } from "./schema-context.js";
export { SetupCache, setupCacheLine } from "./schema-setup-cache.js";
export {
  MIN_SECRET_LENGTH,
  REDACTED,
  TOKEN_PATTERNS,
  createRedactor,
  scanForSecrets,
  secretVariants,
  type Redactor,
  type RedactorOptions,
} from "./redact.js";
export { callPatch, summarizePatch } from "./patch.js";
export { parseGitDiff, type DiffFile, type ParsedDiff } from "./diff-parse.js";
export { capText, describeCall, summarizeCall } from "./format.js";
export {
  GITHUB_COMMENT_MAX_CHARS,
  GITHUB_JOB_SUMMARY_MAX_BYTES,
  MARKDOWN_DEFAULT_MAX_CHARS,
  escapeMarkdownInline,
  markdownCode,
  renderMarkdown,
  type MarkdownOptions,
} from "./markdown.js";
export { neutralizeGitHubText, type GitHubTextOptions } from "./github-text.js";
export { HTML_MAX_PATCH_LINES, renderHtml, type HtmlOptions } from "./html.js";
export {
  PATCH_FILE_NAME,
  REPORT_FILE_NAMES,
  TOOL_OUTPUTS_DIR,
  atomicWriteFile,
  atomicWriteFiles,
  renderReportFile,
  writeReportFiles,
  writeReportFilesSync,
  writeToolOutput,
  type RenderReportFileOptions,
  type WriteReportOptions,
  type WrittenReport,
} from "./write-files.js";
export { RUN_TRAILER, parseRunCommit } from "./run-commit.js";
