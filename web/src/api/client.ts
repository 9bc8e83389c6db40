// Typed access to the memchat API: paths and bodies come from the server's openapi.json.
import createClient, { type Middleware } from "openapi-fetch";
import { apiErrorFrom } from "./errors";
import type { paths } from "./schema";
import { authHeaders, reportUnauthorized } from "./session";

const auth: Middleware = {
  onRequest({ request }) {
    for (const [name, value] of Object.entries(authHeaders())) request.headers.set(name, value);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && !new URL(request.url).pathname.startsWith("/api/auth/")) {
      reportUnauthorized();
    }
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(auth);

type Result<T> = { data?: T; error?: unknown; response: Response };

/** The response's data, or an ApiError with the server's message. */
export async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) {
    const text = typeof error === "string" ? error : JSON.stringify(error ?? "");
    throw apiErrorFrom(response.status, text);
  }
  return data as T;
}

/** For a 204 response: throws like `unwrap`, returns nothing. */
export async function expectOk(call: Promise<Result<unknown>>): Promise<void> {
  await unwrap(call);
}

/** fetch for the chat transport: same auth handling as every other call. */
export const chatFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  if (response.status === 401) reportUnauthorized();
  return response;
};
