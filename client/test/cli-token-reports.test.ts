import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import {
  CreateTokenRequestSchema,
  TokenSummarySchema,
} from "../src/gen/perps/token/v1/token_pb.js";
import { cliSuite, json, run } from "./support/cli-runner.js";
import { createOptionOf } from "./support/create-option.js";
import { INACTIVE_INTROSPECTION } from "./support/inactive-introspection.js";
import { comparable, tokenSummary } from "./support/token-summary.js";

// The tests use distinct users and key files, so they run side by side.
describe("perps-tokens (the bin of package.json)", { concurrency: true }, () => {
  const { service } = cliSuite();

  // Each field CreateTokenRequest and TokenSummary share (token.proto) is
  // checked as it is declared: create's option reaches the store, and list
  // --json shows it, with no change to this test.
  it("create: every field TokenSummary shares with CreateTokenRequest, given as its option, lists as given", async () => {
    const userId = randomUUID();
    await run(["keygen", "--out", "hana.pem"]);
    assert.equal((await run(["register-key", "--user", userId, "--key", "hana.pem"])).code, 0);
    const shared = TokenSummarySchema.fields.filter(
      (field) => field.localName in CreateTokenRequestSchema.field,
    );
    assert.ok(shared.some((field) => field.localName === "name"));
    // A list field's option is repeated, one value each; its values must be ones the service takes.
    const lists: Record<string, string[]> = {
      scopes: ["read", "transfer"],
      allowedIps: ["203.0.113.7", "2001:db8::/32"],
    };
    const sample = (jsonName: string): string | string[] => lists[jsonName] ?? `${jsonName} ü`;
    const created = await run([
      "create",
      "--user",
      userId,
      "--key",
      "hana.pem",
      "--json",
      ...shared.flatMap((field) =>
        [sample(field.jsonName)]
          .flat()
          .flatMap((value) => [`--${createOptionOf(field.localName)}`, value]),
      ),
    ]);
    assert.equal(created.code, 0, created.stderr);
    const { token } = json(created.stdout);
    const listed = await run(["list", "--json", "--token", String(token)]);
    assert.equal(listed.code, 0, listed.stderr);
    const [entry] = JSON.parse(listed.stdout) as Record<string, unknown>[];
    for (const field of shared) {
      assert.deepEqual(entry?.[field.jsonName], sample(field.jsonName), field.jsonName);
    }
  });

  it("list: a user's named tokens by name, as a table or --json, with --token or $PERPS_TOKEN, on every transport", async () => {
    const userId = randomUUID();
    await run(["keygen", "--out", "gina.pem"]);
    assert.equal((await run(["register-key", "--user", userId, "--key", "gina.pem"])).code, 0);
    const create = async (...extra: string[]) => {
      const r = await run(["create", "--user", userId, "--key", "gina.pem", "--json", ...extra]);
      assert.equal(r.code, 0, r.stderr);
      return json(r.stdout) as { id: string; token: string; expiresAt: string };
    };
    const session = await create();
    // No named token yet.
    const none = await run(["list", "--token", session.token]);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, "No named tokens.\n");
    const noneJson = await run(["list", "--json"], { PERPS_TOKEN: session.token });
    assert.equal(noneJson.code, 0, noneJson.stderr);
    assert.equal(noneJson.stdout, "[]\n");

    const bot = await create("--name", "bot");
    const alpha = await create("--name", "Alpha bot");
    const tokens = [session.token, bot.token, alpha.token];
    const human = await run(["list", "--token", bot.token]);
    assert.equal(human.code, 0, human.stderr);
    assert.equal(
      human.stdout,
      [
        "ID                EXPIRES (UTC)  NAME",
        // By expiry: bot, created first with the same lifetime, expires first.
        `${bot.id}  ${bot.expiresAt}     bot`,
        `${alpha.id}  ${alpha.expiresAt}     Alpha bot`,
        "",
      ].join("\n"),
    );
    const expected = [
      tokenSummary({ id: bot.id, name: "bot", expiresAt: bot.expiresAt }),
      tokenSummary({ id: alpha.id, name: "Alpha bot", expiresAt: alpha.expiresAt }),
    ];
    for (const transport of ["rest", "connect", "grpc"]) {
      // The token from the environment; --token wins over it.
      const fromEnv = await run(["list", "--json", "--transport", transport], {
        PERPS_TOKEN: session.token,
      });
      assert.equal(fromEnv.code, 0, `${transport}: ${fromEnv.stderr}`);
      assert.deepEqual(comparable(JSON.parse(fromEnv.stdout)), expected, transport);
      const flagWins = await run(
        ["list", "--json", "--transport", transport, "--token", alpha.token],
        { PERPS_TOKEN: "pt_not-a-token" },
      );
      assert.equal(flagWins.code, 0, `${transport}: ${flagWins.stderr}`);
      assert.deepEqual(comparable(JSON.parse(flagWins.stdout)), expected, transport);
      for (const r of [fromEnv, flagWins]) {
        for (const token of tokens) {
          assert.ok(!r.stdout.includes(token) && !r.stderr.includes(token), "no token printed");
        }
      }
    }

    // A deleted token lists nothing: UNAUTHENTICATED, exit 1, as JSON with --json.
    await run(["delete", "--user", userId, "--key", "gina.pem", "--token-id", bot.id]);
    const refused = await run(["list", "--token", bot.token]);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, "");
    assert.equal(refused.stderr, "perps-tokens: UNAUTHENTICATED (HTTP 401): Invalid token\n");
    const refusedJson = await run(["list", "--json", "--transport", "grpc"], {
      PERPS_TOKEN: bot.token,
    });
    assert.equal(refusedJson.code, 1);
    assert.deepEqual(json(refusedJson.stderr), {
      error: { kind: "service", code: 16, codeName: "UNAUTHENTICATED", message: "Invalid token" },
    });

    // The internal listener has no /user/tokens: REST's 404 comes with the hint at the other URL.
    const internal = await run(["list", "--token", alpha.token, "--url", service.internalUrl]);
    assert.equal(internal.code, 1);
    assert.equal(
      internal.stderr,
      "perps-tokens: NOT_FOUND (HTTP 404): no such resource\nThis command calls the public listener: is the URL the service's public one? (--url, $PERPS_TOKENS_URL, default http://127.0.0.1:8080)\n",
    );
  });

  it("introspect: live (exit 0) or not (exit 3), as text or --json, the token as argument or $PERPS_TOKEN", async () => {
    const userId = randomUUID();
    await run(["keygen", "--out", "hank.pem"]);
    assert.equal((await run(["register-key", "--user", userId, "--key", "hank.pem"])).code, 0);
    const createdRun = await run([
      "create",
      "--user",
      userId.toUpperCase(),
      "--key",
      "hank.pem",
      "--name",
      "probe",
      "--expires-in",
      "3600",
      "--json",
    ]);
    assert.equal(createdRun.code, 0, createdRun.stderr);
    const created = json(createdRun.stdout) as { id: string; token: string; expiresAt: string };

    const human = await run(["introspect", created.token]);
    assert.equal(human.code, 0, human.stderr);
    const lines = human.stdout.split("\n");
    assert.deepEqual(lines.slice(0, 4), [
      "active    yes",
      `user      ${userId}`,
      `token id  ${created.id}`,
      "name      probe",
    ]);
    const expiresAtMs = Number(/^expires {3}(\S+) \(Unix ms (\d+)\)$/.exec(lines[4] ?? "")?.[2]);
    assert.ok(expiresAtMs > Date.now() + 3_500_000, human.stdout);
    assert.equal(lines[5], "scopes    read,trade");
    assert.ok(!human.stdout.includes(created.token), "the token is not printed");

    for (const transport of ["connect", "grpc"]) {
      const machine = await run(["introspect", "--json", "--transport", transport], {
        PERPS_TOKEN: created.token,
      });
      assert.equal(machine.code, 0, `${transport}: ${machine.stderr}`);
      assert.deepEqual(json(machine.stdout), {
        active: true,
        userId,
        tokenId: created.id,
        name: "probe",
        expiresAt: created.expiresAt,
        expiresAtMs,
        scopes: ["read", "trade"],
      });
    }

    const inactive = INACTIVE_INTROSPECTION;
    await run(["delete", "--user", userId, "--key", "hank.pem", "--token-id", created.id]);
    const gone = await run(["introspect", created.token]);
    assert.equal(gone.code, 3, gone.stderr);
    assert.equal(gone.stderr, "");
    assert.equal(
      gone.stdout,
      "active    no (not a live token: malformed, unknown, expired or deleted)\n",
    );
    // The argument wins over the environment; a malformed token is just as inactive.
    for (const [args, env] of [
      [["introspect", created.token, "--json"], {}],
      [["introspect", "--json", "--transport", "grpc", "pt_nope"], { PERPS_TOKEN: created.token }],
    ] as const) {
      const r = await run(args, env);
      assert.equal(r.code, 3, r.stderr);
      assert.deepEqual(json(r.stdout), inactive);
    }

    // The public listener does not serve it: a refusal (exit 1), not an answer.
    const publicListener = await run(["introspect", "pt_x", "--internal-url", service.publicUrl]);
    assert.equal(publicListener.code, 1);
    assert.match(publicListener.stderr, /^perps-tokens: UNIMPLEMENTED: /);
    // With a hint at the likely cause: the URL of the other listener.
    assert.match(
      publicListener.stderr,
      /\nThis command calls the internal listener: is the URL the service's internal one\? \(--internal-url, \$PERPS_TOKENS_INTERNAL_URL, default http:\/\/127\.0\.0\.1:9090\)\n$/,
    );
  });
});
