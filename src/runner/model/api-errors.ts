// How a failed model call is sorted: the kind of error (what the user is told to check), whether another
// attempt can help, and how long the server asked to wait. The driver retries by these; nothing here calls
// the API. Messages are redacted by the caller's function and never carry a credential.
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from "@anthropic-ai/sdk";
import { WorkloadIdentityError } from "@anthropic-ai/sdk/lib/credentials/types";
import type { ModelApiError } from "./driver.js";

export type ErrorKind = ModelApiError["kind"];

/** 429 error codes that waiting does not clear. */
const SPEND_LIMIT_CODES = new Set([
  "enforced_spend_limit_reached",
  "contract_spend_limit_reached",
  "linked_organization_spend_limit_reached",
]);
const SPEND_LIMIT_WORDING = /spend[_ -]?limit|usage limits?\b|credit balance|billing/i;

/** A stream that ended or stalled without a complete message. */
export class StreamBrokenError extends Error {
  override readonly name = "StreamBrokenError";
}

export interface Failure {
  kind: ErrorKind;
  status: number | undefined;
  retryable: boolean;
  /** Wait the server asked for (retry-after-ms / retry-after). */
  retryAfterMs: number | undefined;
  /** Redacted description, e.g. `429 rate_limit_error: ...`. */
  detail: string;
}

export const KIND_LABEL: Record<ErrorKind, string> = {
  auth: "rejected the credentials",
  rate_limit: "rate limited the run",
  spend_limit: "spend limit reached",
  overloaded: "overloaded",
  invalid_request: "rejected the request",
  server: "server error",
  connection: "unreachable",
  stream: "stream broke",
};

/** Sorts an SDK or stream error into a kind, and whether another attempt can help. */
export function classifyError(error: unknown, redact: (text: string) => string): Failure {
  const base = { status: undefined, retryAfterMs: undefined };
  if (error instanceof StreamBrokenError) {
    return { ...base, kind: "stream", retryable: true, detail: redact(error.message) };
  }
  if (error instanceof APIConnectionTimeoutError) {
    return { ...base, kind: "connection", retryable: true, detail: "request timed out" };
  }
  if (error instanceof APIConnectionError) {
    return {
      ...base,
      kind: "connection",
      retryable: true,
      detail: redact(`connection error: ${describeCause(error)}`),
    };
  }
  if (error instanceof APIError && !(error instanceof APIUserAbortError))
    return classifyApiError(error, redact);
  if (error instanceof WorkloadIdentityError) {
    // The token exchange: refused (a status) is a credential problem; unreachable is retried like the API.
    const refused = error.statusCode !== null && error.statusCode < 500;
    const status = error.statusCode ?? undefined;
    const detail = redact(`token exchange: ${describeCause(error)}`);
    return refused
      ? { ...base, status, kind: "auth", retryable: false, detail }
      : { ...base, status, kind: "connection", retryable: true, detail };
  }
  const message = error instanceof Error ? describeCause(error) : String(error);
  return { ...base, kind: "stream", retryable: true, detail: redact(`stream error: ${message}`) };
}

function classifyApiError(error: APIError, redact: (text: string) => string): Failure {
  const status = error.status;
  const type = error.type ?? "error";
  const apiMessage = error.apiMessage ?? error.message;
  const detail = redact(`${status ?? "stream"} ${type}: ${truncate(apiMessage, 300)}`);
  const retryAfterMs = parseRetryAfter(error.headers);
  const shouldRetry = error.headers?.get("x-should-retry");
  const kind = kindOf(status, type, error);
  let retryable = isRetryableKind(kind, status);
  if (shouldRetry === "false") retryable = false;
  if (shouldRetry === "true" && !isNeverRetried(kind, status)) retryable = true;
  return { kind, status, retryable, retryAfterMs: retryable ? retryAfterMs : undefined, detail };
}

function kindOf(status: number | undefined, type: string, error: APIError): ErrorKind {
  if (status === 401 || status === 403 || type === "authentication_error" || type === "permission_error")
    return "auth";
  if (status === 402 || type === "billing_error") return "spend_limit";
  if (status === 429 || type === "rate_limit_error")
    return isSpendLimit(error) ? "spend_limit" : "rate_limit";
  if (status === 529 || type === "overloaded_error") return "overloaded";
  if (status === 408 || status === 409) return "server";
  if (status !== undefined && status >= 500) return "server";
  if (type === "api_error" || type === "timeout_error") return "server";
  if (status !== undefined && status >= 400) return "invalid_request";
  if (type === "invalid_request_error" || type === "not_found_error") return "invalid_request";
  return "stream";
}

function isRetryableKind(kind: ErrorKind, status: number | undefined): boolean {
  if (isNeverRetried(kind, status)) return false;
  return (
    kind === "rate_limit" ||
    kind === "overloaded" ||
    kind === "server" ||
    kind === "connection" ||
    kind === "stream"
  );
}

function isNeverRetried(kind: ErrorKind, status: number | undefined): boolean {
  if (kind === "auth" || kind === "spend_limit" || kind === "invalid_request") return true;
  return status === 400 || status === 401 || status === 403 || status === 404;
}

function isSpendLimit(error: APIError): boolean {
  if (error.errorCode && SPEND_LIMIT_CODES.has(error.errorCode)) return true;
  const text = `${error.apiMessage ?? ""} ${safeJson(error.error)}`;
  return SPEND_LIMIT_WORDING.test(text);
}

/** `retry-after-ms` (ms), else `retry-after` (seconds or an HTTP date), as the SDK reads them. */
export function parseRetryAfter(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get("retry-after");
  if (!value) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1_000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - Date.now());
}

export function describeCause(error: Error): string {
  const parts = [error.message];
  let cause: unknown = error.cause;
  for (let depth = 0; depth < 3 && cause instanceof Error; depth += 1) {
    const code = (cause as NodeJS.ErrnoException).code;
    parts.push(code ? `${cause.message} (${code})` : cause.message);
    cause = cause.cause;
  }
  return parts.filter(Boolean).join(": ");
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
