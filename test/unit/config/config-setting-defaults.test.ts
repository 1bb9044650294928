import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseConfig, SETTING_DEFAULTS } from "../../../src/config/config.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * The option names under which modules take each setting: none of them may
 * be defaulted below src/config (`opts.<name> ?? …`).
 */
const OPTION_NAMES: Record<keyof typeof SETTING_DEFAULTS, readonly string[]> = {
  tokenMaxActivePerUser: ["tokenMaxActivePerUser", "maxActivePerUser"],
  tokenRateLimitPerMinute: ["tokenRateLimitPerMinute", "rateLimitPerMinute"],
  tokenListRateLimitPerMinute: ["tokenListRateLimitPerMinute", "listRateLimitPerMinute"],
  redisRevokeReplicasAck: ["redisRevokeReplicasAck", "revokeReplicasAck"],
  redisWaitTimeoutMs: ["redisWaitTimeoutMs", "waitTimeoutMs"],
  requestTimeoutMs: ["requestTimeoutMs"],
  answerTimeoutMs: ["answerTimeoutMs"],
  maxConnectionsPerListener: ["maxConnectionsPerListener", "maxConnections"],
  tokenCacheMaxEntries: ["tokenCacheMaxEntries"],
  tokenCacheGraceMs: ["tokenCacheGraceMs", "graceMs"],
  lastUseFlushMs: ["lastUseFlushMs", "flushIntervalMs"],
};

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter(
      (file) => file.endsWith(".ts") && !file.startsWith("gen/") && !file.startsWith("config/"),
    )
    .map((file) => join(ROOT, dir, file));
}

/** Every `opts.<option> ?? <default>` (or `opts.<bag>?.<option> ?? …`) in a source text. */
function defaultsIn(text: string): { option: string; fallback: string }[] {
  return [...text.matchAll(/\bopts\.(?:\w+\??\.)*(\w+)\s*\?\?\s*([\w.]+)/g)].map((match) => ({
    option: match[1] ?? "",
    fallback: match[2] ?? "",
  }));
}

describe("setting defaults: declared once (src/config/config.ts)", () => {
  it("are what parseConfig gives when nothing is set", () => {
    const config = parseConfig({});
    for (const [name, value] of Object.entries(SETTING_DEFAULTS)) {
      assert.equal(config[name as keyof typeof SETTING_DEFAULTS], value, name);
    }
  });

  it("the search below sees a default where one is applied", () => {
    assert.deepEqual(defaultsIn("const n = opts.limits?.maxConnections ?? SETTING_DEFAULTS.x;"), [
      { option: "maxConnections", fallback: "SETTING_DEFAULTS.x" },
    ]);
  });

  it("are applied by parseConfig alone: no module below src/config defaults a setting", () => {
    const settings = new Set(Object.values(OPTION_NAMES).flat());
    for (const file of sources("src")) {
      const text = readFileSync(file, "utf8");
      const name = relative(ROOT, file);
      assert.ok(!text.includes("SETTING_DEFAULTS"), `${name} reads SETTING_DEFAULTS`);
      for (const use of defaultsIn(text)) {
        assert.ok(
          !settings.has(use.option),
          `${name}: opts.${use.option} defaults to ${use.fallback}; take it complete from the config`,
        );
      }
    }
  });
});
