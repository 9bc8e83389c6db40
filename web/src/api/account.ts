// The signed-in user's own account: password, export, deletion.
import { api, expectOk, unwrap } from "./client";

/**
 * Sets a new password. The server revokes the login tokens issued before and answers with a
 * fresh one for this session; returned here (null from a server that answers 204).
 */
export async function changePassword(currentPassword: string, newPassword: string): Promise<string | null> {
  const answer: unknown = await unwrap(api.POST("/api/me/password", { body: { currentPassword, newPassword } }));
  const token = (answer as { token?: unknown } | null | undefined)?.token;
  return typeof token === "string" ? token : null;
}

/** Everything stored for the account, as the server exports it. */
export const exportAccount = (): Promise<unknown> => unwrap(api.GET("/api/me/export"));

export const deleteAccount = (): Promise<void> => expectOk(api.DELETE("/api/me"));
