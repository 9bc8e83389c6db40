// One contract for server and console: openapi.json is what `memchat openapi` prints, and
// src/api/schema.d.ts is what openapi-typescript makes of it. Both are checked in.
//
//   node scripts/api.mjs openapi   write openapi.json from the server (`memchat openapi`)
//   node scripts/api.mjs types     write src/api/schema.d.ts from openapi.json
//   node scripts/api.mjs check     fail when either file is stale
//
// The server command is $MEMCHAT_CLI, else ../.venv/bin/memchat. `check` compares
// openapi.json with the server only when that command exists, so the console still
// builds on a machine with Node alone.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const OPENAPI = "openapi.json";
const SCHEMA = "src/api/schema.d.ts";
const cli = process.env.MEMCHAT_CLI ?? resolve("..", ".venv", "bin", "memchat");

function serverOpenapi() {
  return execFileSync(cli, ["openapi"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
}

function generateTypes(target) {
  execFileSync("npx", ["--no-install", "openapi-typescript", OPENAPI, "-o", target], { stdio: "inherit" });
}

function check() {
  let stale = false;
  if (existsSync(cli)) {
    if (serverOpenapi() !== readFileSync(OPENAPI, "utf8")) {
      console.error(`${OPENAPI} differs from \`memchat openapi\`: run \`npm run gen:openapi && npm run gen:api\`.`);
      stale = true;
    }
  } else {
    console.warn(`${cli} not found: checking ${SCHEMA} against the committed ${OPENAPI} only.`);
  }
  const dir = mkdtempSync(join(tmpdir(), "memchat-api-"));
  try {
    const fresh = join(dir, "schema.d.ts");
    generateTypes(fresh);
    if (readFileSync(fresh, "utf8") !== readFileSync(SCHEMA, "utf8")) {
      console.error(`${SCHEMA} is out of date with ${OPENAPI}: run \`npm run gen:api\`.`);
      stale = true;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (stale) process.exit(1);
  console.log("API types match the server.");
}

const command = process.argv[2];
if (command === "openapi") writeFileSync(OPENAPI, serverOpenapi());
else if (command === "types") generateTypes(SCHEMA);
else if (command === "check") check();
else {
  console.error("usage: node scripts/api.mjs openapi|types|check");
  process.exit(2);
}
