import { t } from "../i18n";

/** A failed API call, carrying the server's `{"error": {"code", "message"}}` when it sent one. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

type ErrorBody = { error?: { code?: unknown; message?: unknown }; detail?: unknown };

function parseErrorBody(text: string): { code?: string; message?: string } | null {
  try {
    const body = JSON.parse(text) as ErrorBody;
    const code = typeof body.error?.code === "string" ? body.error.code : undefined;
    const message = typeof body.error?.message === "string" ? body.error.message : undefined;
    if (code !== undefined || message !== undefined) return { code, message };
    if (typeof body.detail === "string") return { message: body.detail };
  } catch {
    // Not JSON: the text itself is the message.
  }
  return null;
}

/** A 404 from the API: the thing asked for does not exist (or is not this user's). */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}

export function apiErrorFrom(status: number, bodyText: string): ApiError {
  const parsed = parseErrorBody(bodyText);
  const message = parsed?.message ?? (bodyText.trim() || t.errors.generic);
  return new ApiError(status, parsed?.code ?? `http_${status}`, message);
}

export type ErrorDescription = {
  /** In the UI language, always. */
  text: string;
  /** The server's own words (English), for a details line; absent when there are none. */
  detail?: string;
};

function localized(code: string | undefined, status: number | undefined): string {
  const byCode = code !== undefined ? t.errors.codes[code] : undefined;
  if (byCode) return byCode;
  const byStatus = status !== undefined ? t.errors.status[status] : undefined;
  return byStatus ?? t.errors.generic;
}

/**
 * What to tell a person about any error the console meets. useChat's errors carry the
 * response body as their message (the AI SDK's text transport cannot do better), so a JSON
 * error body is unpacked here. The text is always in the UI language (by the server's error
 * code, else by the HTTP status, else a generic sentence); the server's own words come along
 * only as detail, never mixed into the text.
 */
export function describeError(error: unknown): ErrorDescription {
  const { code, status, message, network } = unpackError(error);
  if (network) return { text: t.errors.network, detail: message };
  if (code === undefined && status === undefined && message === undefined) return { text: t.errors.generic };
  const text = localized(code, status);
  return message && message !== text ? { text, detail: message } : { text };
}

/** The server's error code of any error the console meets (useChat's included), if it has one. */
export function errorCodeOf(error: unknown): string | undefined {
  return unpackError(error).code;
}

function unpackError(error: unknown): { code?: string; status?: number; message?: string; network?: boolean } {
  let code: string | undefined;
  let status: number | undefined;
  let message: string | undefined;
  if (error instanceof ApiError) {
    code = error.code;
    status = error.status;
    message = error.message;
  } else if (error instanceof TypeError) {
    return { network: true, message: error.message || undefined };
  } else if (error instanceof Error) {
    const responseBody = (error as { responseBody?: unknown }).responseBody;
    const statusCode = (error as { statusCode?: unknown }).statusCode;
    if (typeof statusCode === "number") status = statusCode;
    const source = typeof responseBody === "string" && responseBody ? responseBody : error.message;
    const parsed = parseErrorBody(source);
    code = parsed?.code;
    message = parsed?.message ?? (source || undefined);
  } else {
    return {};
  }
  return { code, status, message };
}
