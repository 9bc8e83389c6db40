// The signed-in user's own account: password, export, deletion.
import { api, expectOk, unwrap } from "./client";

export const changePassword = (currentPassword: string, newPassword: string): Promise<void> =>
  expectOk(api.POST("/api/me/password", { body: { currentPassword, newPassword } }));

/** Everything stored for the account, as the server exports it. */
export const exportAccount = (): Promise<unknown> => unwrap(api.GET("/api/me/export"));

export const deleteAccount = (): Promise<void> => expectOk(api.DELETE("/api/me"));
