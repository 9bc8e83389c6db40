// API keys: made with a login token, listed by prefix, revoked at once.
import { api, expectOk, unwrap } from "./client";
import type { components } from "./schema";

export type ApiKey = components["schemas"]["ApiKeyOut"];
export type ApiKeyCreated = components["schemas"]["ApiKeyCreated"];

export const listKeys = async (): Promise<ApiKey[]> => (await unwrap(api.GET("/api/keys"))).keys;

export const createKey = (name: string): Promise<ApiKeyCreated> => unwrap(api.POST("/api/keys", { body: { name } }));

export const deleteKey = (keyId: string): Promise<void> =>
  expectOk(api.DELETE("/api/keys/{key_id}", { params: { path: { key_id: keyId } } }));
