import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseConfig } from "../../../src/config/config.js";
import { SETTING_DEFAULTS } from "../../../src/config/setting-defaults.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * The option names under which modules take each setting: a default one of
 * them applies (`opts.<name> ?? …`) must be the declared one.
 */
const OPTION_NAMES: Record<keyof typeof SETTING_DEFAULTS, readonly string[]> = {
  tokenMaxActivePerUser: ["tokenMaxActivePerUser", "maxActivePerUser"],
  tokenRateLimitPerMinute: ["tokenRateLimitPerMinute", "rateLimitPerMinute"],
  tokenListRateLimitPerMinute: ["tokenListRateLimitPerMinute", "listRateLimitPerMinute"],
  redisRevokeReplicasAck: ["redisRevokeReplicasAck", "revokeReplicasAck"],
  redisWaitTimeoutMs: ["redisWaitTimeoutMs", "waitTimeoutMs"],
  requestTimeoutMs: ["requestTimeoutMs"],
  maxConnectionsPerListener: ["maxConnectionsPerListener", "maxConnections"],
  tokenCacheMaxEntries: ["tokenCacheMaxEntries"],
};

/** Settings only parseConfig defaults: a module below src/config takes them as given. */
const CONFIG_ONLY: ReadonlySet<string> = new Set(["redisRevokeReplicasAck"]);

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.startsWith("gen/"))
    .map((file) => join(ROOT, dir, file));
}

/** Every `opts.<option> ?? <default>` (or `opts.<bag>?.<option> ?? …`) in the service's sources. */
function defaultsApplied(): { file: string; option: string; fallback: string }[] {
  const found = [];
  for (const file of sources("src")) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/\bopts\.(?:\w+\??\.)*(\w+)\s*\?\?\s*([\w.]+)/g)) {
      found.push({ file: relative(ROOT, file), option: match[1] ?? "", fallback: match[2] ?? "" });
    }
  }
  return found;
}

describe("setting defaults: declared once (src/config/setting-defaults.ts)", () => {
  it("are what parseConfig gives when nothing is set", () => {
    const config = parseConfig({});
    for (const [name, value] of Object.entries(SETTING_DEFAULTS)) {
      assert.equal(config[name as keyof typeof SETTING_DEFAULTS], value, name);
    }
  });

  it("are the defaults every module applies, never a number of its own", () => {
    const applied = defaultsApplied();
    for (const [setting, options] of Object.entries(OPTION_NAMES)) {
      const uses = applied.filter((use) => options.includes(use.option));
      if (CONFIG_ONLY.has(setting)) {
        assert.deepEqual(uses, [], `${setting} is defaulted by parseConfig alone`);
        continue;
      }
      assert.ok(uses.length > 0, `some module defaults ${setting} (else this check sees nothing)`);
      for (const use of uses) {
        assert.equal(
          use.fallback,
          `SETTING_DEFAULTS.${setting}`,
          `${use.file}: opts.${use.option} defaults to ${use.fallback}, not the declared default`,
        );
      }
    }
  });
});
