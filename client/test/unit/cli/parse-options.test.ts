import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  joinOptionValues,
  parseCommandLine,
  parseOptions,
  wantsHelp,
  wantsJson,
} from "../../../src/cli/parse-options.js";
import { UsageError } from "../../../src/cli/usage-error.js";

const SPEC = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  user: { type: "string" },
  name: { type: "string" },
  "token-id": { type: "string" },
  out: { type: "string", short: "o" },
} as const;

// parseArgs answers a null-prototype object; a plain copy compares with a literal.
function parse(args: string[]) {
  return { ...parseOptions("cmd", args, SPEC) };
}

function usageError(message: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof UsageError, String(err));
    assert.equal(err.command, "cmd");
    assert.match(err.message, message);
    return true;
  };
}

describe("parseOptions: the argument after an option that takes a value is its value", () => {
  // Ids are 16 base64url characters: about 1 in 64 starts with "-".
  const values = ["-AbCdEfGhIjKlMnO", "--AbCdEfGhIjKlMn", "-", "--", "-h", "--help", "--json"];
  for (const value of values) {
    it(`--token-id ${value}`, () => {
      assert.deepEqual(parse(["--token-id", value, "--json"]), {
        "token-id": value,
        json: true,
      });
    });
  }

  it("--option=value, whatever the value starts with", () => {
    assert.deepEqual(parse(["--token-id=-AbC", "--name=--x=y"]), {
      "token-id": "-AbC",
      name: "--x=y",
    });
  });

  it("every option taking a value, long and short", () => {
    assert.deepEqual(parse(["--user", "-u", "--name", "-n", "-o", "-file", "--token-id", "-t"]), {
      user: "-u",
      name: "-n",
      out: "-file",
      "token-id": "-t",
    });
  });

  it("a value that is the name of an option is not that option", () => {
    assert.deepEqual(parse(["--name", "--user", "--user", "u"]), {
      name: "--user",
      user: "u",
    });
  });

  it("values that do not start with '-' are unchanged", () => {
    assert.deepEqual(parse(["--user", "u-1", "--token-id", "AbC-_x"]), {
      user: "u-1",
      "token-id": "AbC-_x",
    });
  });

  it("still refuses unknown options, positionals and a missing value", () => {
    assert.throws(() => parseOptions("cmd", ["--bogus"], SPEC), usageError(/Unknown option/));
    assert.throws(
      () => parseOptions("cmd", ["--user", "u", "extra"], SPEC),
      usageError(/Unexpected argument 'extra'/),
    );
    assert.throws(
      () => parseOptions("cmd", ["--token-id"], SPEC),
      usageError(/^Option '--token-id <value>' argument missing$/),
    );
    // A boolean option takes no value: what follows it is an argument of its own.
    assert.throws(
      () => parseOptions("cmd", ["--json", "-x"], SPEC),
      usageError(/Unknown option '-x'/),
    );
  });
});

describe("parseCommandLine: options and at most N arguments", () => {
  const line = (args: string[]) => {
    const { values, positionals } = parseCommandLine("cmd", args, SPEC, 1);
    return { values: { ...values }, positionals };
  };

  it("takes the argument, before or after options, or after --", () => {
    assert.deepEqual(line(["pt_x", "--json"]), { values: { json: true }, positionals: ["pt_x"] });
    assert.deepEqual(line(["--user", "u", "pt_x"]), {
      values: { user: "u" },
      positionals: ["pt_x"],
    });
    assert.deepEqual(line(["--", "-pt"]), { values: {}, positionals: ["-pt"] });
    assert.deepEqual(line([]), { values: {}, positionals: [] });
  });

  it("refuses one too many without repeating them (one may be a token)", () => {
    assert.throws(
      () => parseCommandLine("cmd", ["pt_secret1", "pt_secret2"], SPEC, 1),
      (err: unknown) =>
        err instanceof UsageError &&
        err.message === "expected at most 1 argument(s), got 2" &&
        !err.message.includes("secret"),
    );
    assert.throws(
      () => parseCommandLine("cmd", ["--bogus"], SPEC, 1),
      usageError(/Unknown option/),
    );
  });
});

describe("joinOptionValues", () => {
  it("joins value options to the next argument and stops at --", () => {
    assert.deepEqual(
      joinOptionValues(["-h", "--user", "-u", "-o", "-f", "--", "--name", "-n"], SPEC),
      ["-h", "--user=-u", "--out=-f", "--", "--name", "-n"],
    );
  });
});

describe("wantsHelp and wantsJson", () => {
  it("see the flags", () => {
    assert.equal(wantsHelp(["--user", "u", "--help"], SPEC), true);
    assert.equal(wantsHelp(["-h"], SPEC), true);
    assert.equal(wantsJson(["--user", "u", "--json"], SPEC), true);
    assert.equal(wantsJson(["--bogus", "--json"], SPEC), true);
  });

  it("not a value that looks like one, nor anything after --", () => {
    assert.equal(wantsHelp(["--name", "--help"], SPEC), false);
    assert.equal(wantsHelp(["--token-id", "-h"], SPEC), false);
    assert.equal(wantsJson(["--name", "--json"], SPEC), false);
    assert.equal(wantsHelp(["--", "--help"], SPEC), false);
    assert.equal(wantsJson(["--", "--json"], SPEC), false);
  });
});
