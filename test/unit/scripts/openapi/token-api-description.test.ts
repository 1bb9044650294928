import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createTokenMessage,
  deleteTokenMessage,
  TIMESTAMP_OUTSIDE_WINDOW,
} from "@perps/token-client/protocol";
import { SIGNATURE_PATTERN } from "../../../../scripts/openapi/token-api-constraints.js";
import {
  createTokenNotes,
  deleteTokenNotes,
  listTokensNotes,
  tokenApiDescription,
} from "../../../../scripts/openapi/token-api-description.js";
import { SETTING_DEFAULTS } from "../../../../src/config/config.js";
import {
  DEFAULT_EXPIRES_IN_SECONDS,
  TIMESTAMP_TOLERANCE_MS,
} from "../../../../src/token/request-rules.js";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const userId = "0B3C4D5E-1F2A-4B4C-BD9E-0123456789AB";
const timestamp = 1_700_000_000_000n;

/** Every signed-message template (`createToken:…`, `deleteToken:…`) a text shows in code spans. */
function templates(prose: string, operation: "createToken" | "deleteToken"): string[] {
  return [...prose.matchAll(new RegExp(`\`(${operation}:[^\`]*)\``, "g"))].map((m) => m[1] ?? "");
}

/** A template with its placeholders filled in. */
function filled(template: string): string {
  return template
    .replace("<timestamp>", String(timestamp))
    .replace("<expiresIn>", "3600")
    .replace("<name>", "bot")
    .replace("<tokenId>", "YAnc9iX83Ws3U0fLFuOMmw")
    .replace("<userId>", userId);
}

describe("the token API's prose", () => {
  it("shows create's signed message, each omitted-field form, as the service builds it", () => {
    const shown = templates(`${tokenApiDescription}\n${createTokenNotes}`, "createToken");
    // The general form, then the description's and the notes' omitted-field forms.
    assert.ok(shown.length >= 5, shown.join(", "));
    assert.ok(shown.includes("createToken:<timestamp>:<expiresIn>:<name>:<userId>"));
    for (const template of shown) {
      const built = createTokenMessage({
        timestamp,
        expiresIn: template.includes("<expiresIn>") ? 3600n : undefined,
        name: template.includes("<name>") ? "bot" : undefined,
        userId,
      });
      assert.equal(filled(template), text(built), template);
    }
  });

  it("shows delete's signed message as the service builds it", () => {
    const shown = templates(`${tokenApiDescription}\n${deleteTokenNotes}`, "deleteToken");
    assert.equal(shown.length, 2);
    for (const template of shown) {
      const built = deleteTokenMessage({ timestamp, tokenId: "YAnc9iX83Ws3U0fLFuOMmw", userId });
      assert.equal(filled(template), text(built), template);
    }
  });

  it("states the service's own numbers and names", () => {
    assert.ok(tokenApiDescription.includes(`defaults to ${DEFAULT_EXPIRES_IN_SECONDS}`));
    const minutes = Number(TIMESTAMP_TOLERANCE_MS) / 60_000;
    assert.ok(tokenApiDescription.includes(`more than ${minutes} minutes from server time`));
    assert.ok(tokenApiDescription.includes(`(\`${SIGNATURE_PATTERN}\`)`));
    assert.ok(tokenApiDescription.includes(`\`reason\` \`${TIMESTAMP_OUTSIDE_WINDOW}\``));
  });

  it("states the list rate's default", () => {
    assert.ok(
      listTokensNotes.includes(
        `TOKEN_LIST_RATE_LIMIT_PER_MINUTE, default ${SETTING_DEFAULTS.tokenListRateLimitPerMinute} per minute`,
      ),
    );
  });

  it("says what create, delete and list answer on success", () => {
    assert.match(createTokenNotes, /^Answers \*\*201\*\*/);
    assert.match(deleteTokenNotes, /^Answers \*\*200\*\* with `\{\}`/);
    assert.match(listTokensNotes, /^Answers \*\*200\*\*/);
  });
});
