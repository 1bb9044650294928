import assert from "node:assert/strict";
import { createPrivateKey, randomUUID } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { isWellFormedToken } from "@perps/token-client/protocol";
import { COMMANDS, cliSuite, cwd, json, publicKeyOfFile, ROOT, run } from "./support/cli-runner.js";

// The tests use distinct users and key files, so they run side by side.
describe("perps-tokens (the bin of package.json)", { concurrency: true }, () => {
  const { service } = cliSuite();

  it("the compiled bin is executable, as npm links it (a rebuild keeps it so)", () => {
    const mode = statSync(join(ROOT, "client", "dist", "cli", "perps-tokens.js")).mode;
    assert.equal(mode & 0o111, 0o111);
  });

  it("--help on every command prints its usage and exits 0", async () => {
    const cases = [
      ["--help"],
      ["-h"],
      ["help"],
      ...COMMANDS.map((c) => [c, "--help"]),
      ["create", "-h"],
      ["help", "delete"],
      ["help", "introspect"],
      ["introspect", "pt_x", "--help"],
      // Help wins over a command line that is otherwise wrong.
      ["create", "--bogus", "--help"],
    ];
    const runs = await Promise.all(cases.map((args) => run(args)));
    for (const [i, r] of runs.entries()) {
      const args = cases[i] ?? [];
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stderr, "");
      const command = COMMANDS.find((c) => args.includes(c));
      assert.ok(
        r.stdout.startsWith(`Usage: perps-tokens ${command ?? "<command>"}`),
        `${args.join(" ")}: ${r.stdout}`,
      );
    }
    assert.match(runs[0]?.stdout ?? "", /PERPS_TOKENS_URL/);
    assert.match(runs[0]?.stdout ?? "", /^ {2}PERPS_TOKEN {2,}/m);
    assert.match(
      runs[0]?.stdout ?? "",
      /^ {2}PERPS_TOKENS_OPERATOR_SECRET\n {29}the operator's secret, for the commands that take\n/m,
    );
    assert.match(runs[0]?.stdout ?? "", /^ {2}list {2,}/m);
    assert.match(runs[0]?.stdout ?? "", /^ {2}introspect {2,}/m);
    const introspectHelp = runs[cases.findIndex((c) => c[1] === "introspect")]?.stdout ?? "";
    assert.match(introspectHelp, /Exit codes: 0 the token is live, 3 it is not/);
  });

  it("keygen writes a 0600 PKCS#8 key file and prints its public key", async () => {
    const r = await run(["keygen", "--out", "alice.pem"]);
    assert.equal(r.code, 0, r.stderr);
    const path = join(cwd, "alice.pem");
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.match(readFileSync(path, "utf8"), /^-----BEGIN PRIVATE KEY-----\n/);
    const printed = /^Public key: ([0-9a-f]{64})$/m.exec(r.stdout)?.[1];
    assert.equal(printed, publicKeyOfFile(path));
    assert.ok(!r.stdout.includes("PRIVATE"), "the private key is not printed");

    // An existing file is kept unless --force; --force also tightens its mode.
    const before = readFileSync(path, "utf8");
    const again = await run(["keygen", "--out", "alice.pem"]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /alice\.pem already exists; pass --force/);
    assert.equal(readFileSync(path, "utf8"), before);
    writeFileSync(join(cwd, "loose.pem"), "old", { mode: 0o644 });
    const forced = await run(["keygen", "--out", "loose.pem", "--force", "--json"]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(statSync(join(cwd, "loose.pem")).mode & 0o777, 0o600);
    assert.deepEqual(json(forced.stdout), {
      keyFile: "loose.pem",
      publicKey: publicKeyOfFile(join(cwd, "loose.pem")),
    });
  });

  it("register-key, create (human and --json), delete, delete-key", async () => {
    const userId = randomUUID();
    const keygen = json((await run(["keygen", "--out", "bob.pem", "--json"])).stdout);
    const publicKey = String(keygen.publicKey);

    const registered = await run(["register-key", "--user", userId, "--public-key", publicKey]);
    assert.equal(registered.code, 0, registered.stderr);
    assert.equal(registered.stdout, `Registered public key ${publicKey} for user ${userId}.\n`);

    const human = await run([
      "create",
      "--user",
      userId,
      "--key",
      "bob.pem",
      "--name",
      "my-bot",
      "--expires-in",
      "3600",
    ]);
    assert.equal(human.code, 0, human.stderr);
    const id =
      /^Created token "my-bot" ([A-Za-z0-9_-]{16}), expires \d{4}-\d{2}-\d{2} \(UTC\)\.$/m.exec(
        human.stdout,
      )?.[1];
    assert.ok(id !== undefined, human.stdout);
    const token = /^(pt_\S+)$/m.exec(human.stdout)?.[1] ?? "";
    assert.ok(isWellFormedToken(token), human.stdout);

    const machine = await run(["create", "--user", userId, "--key", "bob.pem", "--json"]);
    assert.equal(machine.code, 0, machine.stderr);
    const created = json(machine.stdout);
    assert.deepEqual(Object.keys(created).sort(), ["expiresAt", "id", "token"]);
    assert.ok(isWellFormedToken(String(created.token)));

    const deleted = await run(["delete", "--user", userId, "--key", "bob.pem", "--token-id", id]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(deleted.stdout, `Deleted token ${id}.\n`);
    const deletedJson = await run([
      "delete",
      "--user",
      userId,
      "--key",
      "bob.pem",
      "--token-id",
      String(created.id),
      "--json",
    ]);
    assert.equal(deletedJson.code, 0, deletedJson.stderr);
    assert.deepEqual(json(deletedJson.stdout), { deleted: true, tokenId: created.id });

    // Gone: deleting it again is refused.
    const missing = await run(["delete", "--user", userId, "--key", "bob.pem", "--token-id", id]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, "perps-tokens: NOT_FOUND (HTTP 404): tokenId: no such token\n");

    // delete-key by key file; from then on the key signs nothing.
    const removed = await run(["delete-key", "--user", userId, "--key", "bob.pem", "--json"]);
    assert.equal(removed.code, 0, removed.stderr);
    // Both tokens were deleted above: none was left to revoke.
    assert.deepEqual(json(removed.stdout), { deleted: true, publicKey, userId, revokedTokens: 0 });
    const again = await run(["delete-key", "--user", userId, "--public-key", publicKey]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(
      again.stdout,
      `Removed public key ${publicKey} of user ${userId} (if it was registered); revoked 0 live tokens of the user.\n`,
    );
    const refused = await run(["create", "--user", userId, "--key", "bob.pem"]);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, "");
    assert.equal(refused.stderr, "perps-tokens: UNAUTHENTICATED (HTTP 401): Invalid signature\n");
  });

  it("a refusal exits 1 with the service's code and message, as JSON with --json", async () => {
    const userId = randomUUID();
    await run(["keygen", "--out", "carol.pem"]);
    assert.equal((await run(["register-key", "--user", userId, "--key", "carol.pem"])).code, 0);
    const create = ["create", "--user", userId, "--key", "carol.pem", "--name", "dup"];
    assert.equal((await run(create)).code, 0);

    const human = await run(create);
    assert.equal(human.code, 1);
    assert.match(human.stderr, /^perps-tokens: ALREADY_EXISTS \(HTTP 409\): name: /);
    const machine = await run([...create, "--json"]);
    assert.equal(machine.code, 1);
    assert.equal(machine.stdout, "");
    assert.deepEqual(json(machine.stderr), {
      error: {
        kind: "service",
        code: 6,
        codeName: "ALREADY_EXISTS",
        message: "name: a live token of this user already has this name",
        httpStatus: 409,
      },
    });

    // The service's own validation is a refusal too (exit 1), not a usage error.
    const badUser = await run(["create", "--user", "not-a-uuid", "--key", "carol.pem"]);
    assert.equal(badUser.code, 1);
    assert.match(badUser.stderr, /INVALID_ARGUMENT \(HTTP 400\): userId: /);
  });

  it("create and delete over the connect and grpc transports; --url overrides the environment", async () => {
    const userId = randomUUID();
    await run(["keygen", "--out", "dave.pem"]);
    await run(["register-key", "--user", userId, "--key", "dave.pem"]);
    // Nothing listens on port 1: only the flags can make these work.
    const env = { PERPS_TOKENS_URL: "http://127.0.0.1:1" };
    for (const transport of ["connect", "grpc"]) {
      const common = ["--user", userId, "--key", "dave.pem", "--transport", transport];
      const flags = [...common, "--url", service.publicUrl, "--json"];
      const created = await run(["create", ...flags], env);
      assert.equal(created.code, 0, created.stderr);
      const id = String(json(created.stdout).id);
      const deleted = await run(["delete", ...flags, "--token-id", id], env);
      assert.equal(deleted.code, 0, deleted.stderr);
      const unreachable = await run(["delete", ...common, "--token-id", id], env);
      assert.equal(unreachable.code, 1);
      assert.match(unreachable.stderr, /^perps-tokens: UNAVAILABLE: /);
    }
  });

  it("values starting with '-' (1 token id in 64) are taken as printed, spaced or with =", async () => {
    const userId = randomUUID();
    // A key file, a name and an id that all start with "-", passed back as printed.
    const keygen = await run(["keygen", "--out", "-frank.pem", "--json"]);
    assert.equal(keygen.code, 0, keygen.stderr);
    assert.equal(json(keygen.stdout).keyFile, "-frank.pem");
    const registered = await run(["register-key", "--user", userId, "--key", "-frank.pem"]);
    assert.equal(registered.code, 0, registered.stderr);
    const key = ["--user", userId, "--key", "-frank.pem"];

    const created = await run(["create", ...key, "--name", "-bot", "--json"]);
    assert.equal(created.code, 0, created.stderr);
    const id = String(json(created.stdout).id);
    // The same name again reaches the service (a duplicate), not a usage error.
    const again = await run(["create", ...key, "--name=-bot"]);
    assert.equal(again.code, 1, again.stderr);
    assert.match(again.stderr, /^perps-tokens: ALREADY_EXISTS \(HTTP 409\): name: /);
    const deleted = await run(["delete", ...key, "--token-id", id, "--json"]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.deepEqual(json(deleted.stdout), { deleted: true, tokenId: id });

    // An id that starts with "-" reaches the service, which knows no such token.
    for (const form of [
      ["--token-id", "-AbCdEfGhIjKlMnO"],
      ["--token-id=-AbCdEfGhIjKlMnO"],
      ["--token-id", "--bCdEfGhIjKlMnOp"],
    ]) {
      const missing = await run(["delete", ...key, ...form]);
      assert.equal(missing.code, 1, `${form.join(" ")}: ${missing.stderr}`);
      assert.equal(missing.stderr, "perps-tokens: NOT_FOUND (HTTP 404): tokenId: no such token\n");
    }
    // A value that looks like a flag is a value: the id "--json" asks for no JSON output.
    const lookalike = await run(["delete", ...key, "--token-id", "--json"]);
    assert.equal(lookalike.code, 1, lookalike.stderr);
    assert.equal(lookalike.stdout, "");
    assert.equal(lookalike.stderr, "perps-tokens: NOT_FOUND (HTTP 404): tokenId: no such token\n");
  });

  it("reads a key file holding the key as 64 hex characters", async () => {
    const userId = randomUUID();
    await run(["keygen", "--out", "erin.pem"]);
    const jwk = createPrivateKey(readFileSync(join(cwd, "erin.pem"), "utf8")).export({
      format: "jwk",
    });
    writeFileSync(
      join(cwd, "erin.hex"),
      `${Buffer.from(jwk.d ?? "", "base64url").toString("hex")}\n`,
      {
        mode: 0o600,
      },
    );
    await run(["register-key", "--user", userId, "--key", "erin.pem"]);
    const created = await run(["create", "--user", userId, "--key", "erin.hex"]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^Created session token /);
  });

  it("a wrong command line exits 2 and says what is wrong", async () => {
    const cases: [string[], RegExp][] = [
      [[], /^Usage: perps-tokens <command>/],
      [["frobnicate"], /^perps-tokens: unknown command 'frobnicate'\nRun 'perps-tokens --help'/],
      [
        ["create", "--bogus"],
        /^perps-tokens create: Unknown option '--bogus'\nRun 'perps-tokens create --help'/,
      ],
      [["create", "--key", "k.pem"], /^perps-tokens create: --user is required/],
      [
        ["create", "--user", "u", "--key", "k", "--expires-in", "1h"],
        /--expires-in: must be a whole number/,
      ],
      [
        ["create", "--user", "u", "--key", "k", "--transport", "smtp"],
        /--transport: must be rest, connect or grpc/,
      ],
      [["create", "--user", "u", "--key", "k", "--url", "ftp://x"], /--url: must be an http/],
      [["create", "--user"], /^perps-tokens create: Option '--user <value>' argument missing/],
      [["delete", "--user", "u", "--key", "k"], /^perps-tokens delete: --token-id is required/],
      [
        ["delete", "--user", "u", "--key", "k", "--token-id", "t", "extra"],
        /Unexpected argument 'extra'/,
      ],
      [["keygen"], /^perps-tokens keygen: --out is required/],
      [["list"], /^perps-tokens list: give the token as --token TOKEN or in \$PERPS_TOKEN/],
      [["list", "--token"], /^perps-tokens list: Option '--token <value>' argument missing/],
      [["list", "--token", "t", "--transport", "smtp"], /--transport: must be rest, connect/],
      [["introspect"], /^perps-tokens introspect: give the token as the argument TOKEN or in/],
      [
        ["introspect", "pt_a", "pt_b"],
        /^perps-tokens introspect: expected at most 1 argument\(s\), got 2\n/,
      ],
      [["introspect", "t", "--transport", "rest"], /--transport: must be connect or grpc/],
      [["register-key", "--user", "u"], /give exactly one of --public-key HEX and --key FILE/],
      [
        ["register-key", "--user", "u", "--public-key", "abc"],
        /--public-key: must be 64 hex characters/,
      ],
    ];
    const runs = await Promise.all(cases.map(([args]) => run(args)));
    for (const [i, r] of runs.entries()) {
      const [args, message] = cases[i] ?? [[], /./];
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, message);
    }
    const asJson = await run(["create", "--json"]);
    assert.equal(asJson.code, 2);
    assert.deepEqual(json(asJson.stderr), {
      error: { kind: "usage", message: "--user is required" },
    });
  });

  it("a key file that cannot be read exits 1 with the reason", async () => {
    const missing = await run(["create", "--user", randomUUID(), "--key", "nope.pem"]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^perps-tokens: cannot read key file nope\.pem: ENOENT/);
    writeFileSync(join(cwd, "junk.pem"), "not a key");
    const junk = await run(["create", "--user", randomUUID(), "--key", "junk.pem"]);
    assert.equal(junk.code, 1);
    assert.match(junk.stderr, /junk\.pem: not an Ed25519 private key/);
  });
});
