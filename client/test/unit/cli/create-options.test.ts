import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { createCommand } from "../../../src/cli/commands/create.js";
import { CreateTokenRequestSchema } from "../../../src/gen/perps/token/v1/token_pb.js";
import { createOptionOf } from "../../support/create-option.js";

/** The fields the client fills in itself: every other one is the caller's to choose. */
const ADDED_BY_CLIENT = ["signature", "timestamp"];

const README = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");

// A field added to CreateTokenRequest (token.proto) fails here until the
// CLI offers it as an option of `create`, says so in its help and
// client/README.md shows it.
describe("create's options", () => {
  const chosen = CreateTokenRequestSchema.fields.filter(
    (field) => !ADDED_BY_CLIENT.includes(field.localName),
  );

  it("the client adds only the signature and the timestamp", () => {
    for (const name of ADDED_BY_CLIENT) {
      assert.ok(name in CreateTokenRequestSchema.field, name);
    }
    assert.ok(chosen.length > 0);
  });

  for (const field of chosen) {
    const option = createOptionOf(field.localName);
    it(`${field.name}: --${option}, in create's help and in client/README.md`, () => {
      assert.ok(option in createCommand.options, `create has no --${option}`);
      assert.match(createCommand.help, new RegExp(`--${option}\\b`));
      assert.match(README, new RegExp(`perps-tokens create .*--${option}\\b`));
    });
  }
});
