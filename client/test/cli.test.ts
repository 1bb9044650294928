import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, createPrivateKey, createPublicKey, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { isWellFormedToken } from "@perps/token-client/protocol";
import { buildIfStale } from "../../test/support/build.js";
import { TEST_OPERATOR } from "../../test/support/test-operator.js";
import { startTestRedis, type TestRedis } from "../../test/support/test-redis.js";
import { startTestService, type TestService } from "../../test/support/test-service.js";

const ROOT = resolve(import.meta.dirname, "../..");
const COMMANDS = [
  "keygen",
  "register-key",
  "delete-key",
  "create",
  "delete",
  "list",
  "introspect",
  "list-keys",
  "revoke-tokens",
];

/** The bin exactly as package.json declares it, so the test runs what `npm ci` installs. */
function binPath(): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, "client/package.json"), "utf8")) as {
    bin?: Record<string, string>;
  };
  const bin = pkg.bin?.["perps-tokens"];
  assert.equal(typeof bin, "string", 'package.json has no bin "perps-tokens"');
  return join(ROOT, "client", bin ?? "");
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let cwd: string;
let baseEnv: Record<string, string | undefined>;

// Each run is a Node process (~0.2 s of CPU): a few at a time keeps two cores
// busy without starving the service under test.
const MAX_RUNNING = 4;
let running = 0;
const waiting: (() => void)[] = [];

async function slot(): Promise<() => void> {
  while (running >= MAX_RUNNING) {
    await new Promise<void>((wake) => waiting.push(wake));
  }
  running++;
  return () => {
    running--;
    waiting.shift()?.();
  };
}

/** Runs `node <bin> ...args` in a temp folder; resolves when it exits (it must, within 30 s). */
async function run(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  const release = await slot();
  try {
    return await new Promise((resolveRun, reject) => {
      const child = spawn(process.execPath, [binPath(), ...args], {
        cwd,
        env: { ...baseEnv, ...env },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 30_000,
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on("error", reject);
      child.on("close", (code) => resolveRun({ code, stdout, stderr }));
    });
  } finally {
    release();
  }
}

function json(text: string): Record<string, unknown> {
  const lines = text.trim().split("\n");
  assert.equal(lines.length, 1, `one JSON line expected: ${text}`);
  return JSON.parse(lines[0] ?? "") as Record<string, unknown>;
}

/** The raw public key (64 hex) of a PEM private key file, computed independently of the CLI. */
function publicKeyOfFile(path: string): string {
  const jwk = createPublicKey(createPrivateKey(readFileSync(path, "utf8"))).export({
    format: "jwk",
  });
  return Buffer.from(jwk.x ?? "", "base64url").toString("hex");
}

// The tests use distinct users and key files, so they run side by side.
describe("perps-tokens (the bin of package.json)", { concurrency: true }, () => {
  let redis: TestRedis;
  let service: TestService;

  before(async () => {
    buildIfStale();
    redis = await startTestRedis();
    service = await startTestService({ redisUrl: redis.url });
    cwd = mkdtempSync(join(tmpdir(), "perps-cli-"));
    baseEnv = { ...process.env };
    // The child is a plain `node <bin>`, not a test: nothing of this runner's set-up leaks in.
    delete baseEnv.NODE_OPTIONS;
    delete baseEnv.NODE_TEST_CONTEXT;
    delete baseEnv.PERPS_TOKEN;
    baseEnv.PERPS_TOKENS_URL = service.publicUrl;
    baseEnv.PERPS_TOKENS_INTERNAL_URL = service.internalUrl;
    baseEnv.PERPS_TOKENS_OPERATOR_SECRET = TEST_OPERATOR.secret;
  });
  after(async () => {
    rmSync(cwd, { recursive: true, force: true });
    await service.stop();
    await redis.dispose();
  });

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
    assert.match(runs[0]?.stdout ?? "", /^ {2}list {2,}/m);
    assert.match(runs[0]?.stdout ?? "", /^ {2}introspect {2,}/m);
    const introspectHelp = runs[cases.findIndex((c) => c[1] === "introspect")]?.stdout ?? "";
    assert.match(introspectHelp, /Exit codes: 0 the token is live, 3 it is not/);
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
        `${alpha.id}  ${alpha.expiresAt}     Alpha bot`,
        `${bot.id}  ${bot.expiresAt}     bot`,
        "",
      ].join("\n"),
    );
    const expected = [
      { id: alpha.id, name: "Alpha bot", expiresAt: alpha.expiresAt },
      { id: bot.id, name: "bot", expiresAt: bot.expiresAt },
    ];
    for (const transport of ["rest", "connect", "grpc"]) {
      // The token from the environment; --token wins over it.
      const fromEnv = await run(["list", "--json", "--transport", transport], {
        PERPS_TOKEN: session.token,
      });
      assert.equal(fromEnv.code, 0, `${transport}: ${fromEnv.stderr}`);
      assert.deepEqual(JSON.parse(fromEnv.stdout), expected, transport);
      const flagWins = await run(
        ["list", "--json", "--transport", transport, "--token", alpha.token],
        { PERPS_TOKEN: "pt_not-a-token" },
      );
      assert.equal(flagWins.code, 0, `${transport}: ${flagWins.stderr}`);
      assert.deepEqual(JSON.parse(flagWins.stdout), expected, transport);
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
      });
    }

    const inactive = {
      active: false,
      userId: "",
      tokenId: "",
      name: "",
      expiresAt: "",
      expiresAtMs: 0,
    };
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

  it("list-keys and revoke-tokens: an operator's incident tools, as text or --json", async () => {
    const userId = randomUUID();
    const none = await run(["list-keys", "--user", userId]);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, "No keys.\n");
    assert.equal((await run(["list-keys", "--user", userId, "--json"])).stdout, "[]\n");

    await run(["keygen", "--out", "erin.pem"]);
    const publicKey = publicKeyOfFile(join(cwd, "erin.pem"));
    const before = Date.now();
    assert.equal((await run(["register-key", "--user", userId, "--key", "erin.pem"])).code, 0);
    const fingerprint = `SHA256:${createHash("sha256").update(Buffer.from(publicKey, "hex")).digest("base64").replace(/=+$/, "")}`;

    const listed = await run(["list-keys", "--user", userId]);
    assert.equal(listed.code, 0, listed.stderr);
    const [header, row, ...rest] = listed.stdout.trimEnd().split("\n");
    assert.deepEqual(rest, []);
    assert.match(header ?? "", /^ADDED \(UTC\) +FINGERPRINT +PUBLIC KEY$/);
    const cells = (row ?? "").split(/ {2,}/);
    assert.equal(cells.length, 3, row);
    assert.equal(cells[1], fingerprint);
    assert.equal(cells[2], publicKey);
    const added = Date.parse(cells[0] ?? "");
    assert.ok(added >= before - 1000 && added <= Date.now() + 1000, row);
    const listedJson = await run(["list-keys", "--user", userId, "--json"]);
    assert.deepEqual(JSON.parse(listedJson.stdout), [
      { publicKey, fingerprint, addedAt: cells[0] },
    ]);

    const tokens: string[] = [];
    for (const name of ["a", undefined]) {
      const made = await run([
        "create",
        "--user",
        userId,
        "--key",
        "erin.pem",
        "--json",
        ...(name === undefined ? [] : ["--name", name]),
      ]);
      assert.equal(made.code, 0, made.stderr);
      tokens.push(String(json(made.stdout).token));
    }
    const revoked = await run(["revoke-tokens", "--user", userId]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, `Revoked 2 live tokens of user ${userId}.\n`);
    for (const token of tokens) {
      assert.equal((await run(["introspect", token])).code, 3);
    }
    const again = await run(["revoke-tokens", "--user", userId, "--json"]);
    assert.deepEqual(json(again.stdout), { revokedTokens: 0, userId });

    const wrong = await run(["revoke-tokens"]);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /--user/);
    const refused = await run(["revoke-tokens", "--user", "nobody"]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^perps-tokens: INVALID_ARGUMENT: userId: /);
  });

  it("the admin commands send the operator's secret: flag, then env, then .data/redis/operator-secret here", async () => {
    const userId = randomUUID();
    const noSecret = { PERPS_TOKENS_OPERATOR_SECRET: "" };
    // Without any: the service's 401, saying what to send.
    const refused = await run(["list-keys", "--user", userId], noSecret);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /UNAUTHENTICATED: .*authorization: Bearer <operator secret>/);
    // A wrong secret in the environment: refused too; the right one in a file given by flag wins.
    writeFileSync(join(cwd, "operator.secret"), `${TEST_OPERATOR.secret}\n`, { mode: 0o600 });
    const wrongEnv = { PERPS_TOKENS_OPERATOR_SECRET: "op_not-an-operator" };
    assert.equal((await run(["list-keys", "--user", userId], wrongEnv)).code, 1);
    const byFlag = await run(
      ["list-keys", "--user", userId, "--operator-secret-file", "operator.secret"],
      wrongEnv,
    );
    assert.equal(byFlag.code, 0, byFlag.stderr);
    const missing = await run(
      ["list-keys", "--user", userId, "--operator-secret-file", "no-such.secret"],
      noSecret,
    );
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read no-such\.secret/);
    // Where the service writes its generated operator, when run in this folder.
    const dataDir = join(cwd, ".data/redis");
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, "operator-secret"), `${TEST_OPERATOR.secret}\n`, { mode: 0o600 });
    try {
      const found = await run(["revoke-tokens", "--user", userId], noSecret);
      assert.equal(found.code, 0, found.stderr);
    } finally {
      rmSync(join(cwd, ".data"), { recursive: true, force: true });
    }
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
