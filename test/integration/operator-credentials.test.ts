import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { PutUserKeyRequestSchema } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { apiServices } from "../../src/server/api-services.js";
import { grpcStatusOf } from "../support/grpc-status-call.js";
import { killMainProcesses, type MainProcess, startMainProcess } from "../support/main-process.js";
import { samples } from "../support/prometheus-samples.js";
import { serviceSuite } from "../support/service-suite.js";
import { newUser } from "../support/signing.js";
import { credentialsText, operatorHeaders, TEST_OPERATOR } from "../support/test-operator.js";
import { startTestRedis, startTestRedisServer, type TestRedis } from "../support/test-redis.js";
import { startTestService } from "../support/test-service.js";

// Issue 29: anyone who reached the internal port was an operator. Every admin
// RPC (the `operatorOnly` entries of src/server/api-services.ts) now needs an operator's
// secret, on every protocol, checked before the request is even validated.

const WRONG_SECRET = "op_a-secret-no-operator-has";
/** An empty gRPC message in its envelope: the check comes before the request's own rules. */
const EMPTY_ENVELOPE = new Uint8Array(5);

const ADMIN_SERVICES = apiServices({ token: {}, userKey: {}, tokenAdmin: {}, introspection: {} })
  .filter((served) => served.operatorOnly)
  .map((served) => served.service);

/** Every method of every admin service, as "package.Service/Method". */
const ADMIN_METHODS = ADMIN_SERVICES.flatMap((service) =>
  service.methods.map((method) => `${service.typeName}/${method.name}`),
);

/** The grpc-status of a gRPC-Web call over HTTP/1.1: a header (trailers-only) or the trailer frame. */
async function grpcWebStatus(url: string, headers: Record<string, string>): Promise<string> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", ...headers },
    body: EMPTY_ENVELOPE,
  });
  const body = Buffer.from(await res.arrayBuffer());
  const inHeader = res.headers.get("grpc-status");
  if (inHeader !== null) {
    return inHeader;
  }
  return /grpc-status:\s*(\d+)/.exec(body.toString("latin1"))?.[1] ?? "none";
}

describe("operator credentials on the admin RPCs", () => {
  const { service } = serviceSuite();

  it("covers UserKeyService and TokenAdminService, from one list", () => {
    assert.deepEqual(
      ADMIN_SERVICES.map((s) => s.typeName),
      ["perps.token.v1.UserKeyService", "perps.token.v1.TokenAdminService"],
    );
    assert.equal(ADMIN_METHODS.length, 4);
  });

  for (const method of ADMIN_METHODS) {
    it(`${method}: no credential or a wrong one is UNAUTHENTICATED on Connect, gRPC and gRPC-Web`, async () => {
      const url = `${service.internalUrl}/${method}`;
      for (const authorization of [undefined, `Bearer ${WRONG_SECRET}`, "Bearer ", "Basic eDp5"]) {
        const headers: Record<string, string> =
          authorization === undefined ? {} : { authorization };
        // Connect (JSON, HTTP/1.1): 401 with a message saying what to send. An
        // empty body would be INVALID_ARGUMENT if the check came after validation.
        const res = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: "{}",
        });
        const body = (await res.json()) as { code: string; message: string };
        assert.equal(res.status, 401, `${authorization}: ${JSON.stringify(body)}`);
        assert.equal(body.code, "unauthenticated");
        assert.match(body.message, /send "authorization: Bearer <operator secret>"/);
        assert.doesNotMatch(body.message, new RegExp(WRONG_SECRET));
        assert.equal(
          await grpcStatusOf(service.internalUrl, `/${method}`, EMPTY_ENVELOPE, headers),
          "16",
        );
        assert.equal(await grpcWebStatus(url, headers), "16");
      }
    });
  }

  it("the operator's secret lets the call through on every protocol; the audit line names the operator", async () => {
    const user = await newUser();
    const put = await fetch(`${service.internalUrl}/perps.token.v1.UserKeyService/PutUserKey`, {
      method: "POST",
      headers: { "content-type": "application/json", ...operatorHeaders() },
      body: JSON.stringify({ userId: user.userId, publicKey: user.publicKey }),
    });
    assert.equal(put.status, 200, await put.text());
    const path = "/perps.token.v1.TokenAdminService/RevokeUserTokens";
    // An empty request now reaches validation: INVALID_ARGUMENT, not UNAUTHENTICATED.
    assert.equal(
      await grpcStatusOf(service.internalUrl, path, EMPTY_ENVELOPE, operatorHeaders()),
      "3",
    );
    assert.equal(await grpcWebStatus(`${service.internalUrl}${path}`, operatorHeaders()), "3");
    const audit = service.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.msg === "audit" && line.userId === user.userId);
    assert.equal(audit?.operator, TEST_OPERATOR.name);
    assert.equal(audit?.audit, "PutUserKey");
  });

  it("a refusal is logged and counted like every refusal, without the secret", async () => {
    const method = "perps.token.v1.UserKeyService/ListUserKeys";
    const series = `perps_token_requests_total{method="${method}",protocol="connect",code="unauthenticated"}`;
    const before = samples(await (await fetch(`${service.internalUrl}/metrics`)).text());
    const requestId = `refused-${randomUUID()}`;
    const res = await fetch(`${service.internalUrl}/${method}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${WRONG_SECRET}`,
        "x-request-id": requestId,
      },
      body: JSON.stringify({ userId: randomUUID() }),
    });
    assert.equal(res.status, 401);
    await res.arrayBuffer();
    const after = samples(await (await fetch(`${service.internalUrl}/metrics`)).text());
    assert.equal((after.get(series) ?? 0) - (before.get(series) ?? 0), 1);
    await new Promise((done) => setTimeout(done, 50));
    const line = service.logs
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((l) => l.requestId === requestId);
    assert.equal(line?.code, "Unauthenticated");
    assert.equal(line?.method, method);
    assert.equal(
      service.logs.some(
        (text) => text.includes(WRONG_SECRET) || text.includes(TEST_OPERATOR.secret),
      ),
      false,
      "no secret in the log",
    );
  });

  it("TokenService and IntrospectToken stay callable without an operator's credential", async () => {
    const introspect = await fetch(
      `${service.internalUrl}/perps.token.v1.TokenIntrospectionService/IntrospectToken`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: "pt_not-a-token" }),
      },
    );
    assert.equal(introspect.status, 200);
    assert.deepEqual(await introspect.json(), {});
  });
});

describe("audit lines whatever LOG_LEVEL is", () => {
  let redis: TestRedis;
  before(async () => {
    redis = await startTestRedis();
  });
  after(async () => {
    await redis?.dispose();
  });

  for (const logLevel of ["warn", "silent"]) {
    it(`LOG_LEVEL=${logLevel}: PutUserKey and RevokeUserTokens still write theirs, with operator, peer and request id`, async () => {
      const service = await startTestService({ redis: redis.topology, logLevel });
      try {
        const user = await newUser();
        const calls: [string, unknown][] = [
          [
            "perps.token.v1.UserKeyService/PutUserKey",
            { userId: user.userId, publicKey: user.publicKey },
          ],
          ["perps.token.v1.TokenAdminService/RevokeUserTokens", { userId: user.userId }],
        ];
        const ids: string[] = [];
        for (const [method, body] of calls) {
          const requestId = `audit-${randomUUID()}`;
          ids.push(requestId);
          const res = await fetch(`${service.internalUrl}/${method}`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "x-request-id": requestId,
              ...operatorHeaders(),
            },
            body: JSON.stringify(body),
          });
          assert.equal(res.status, 200, await res.text());
        }
        // Over gRPC too (served straight off the HTTP/2 stream): the same line, the same peer.
        const grpcId = `audit-${randomUUID()}`;
        ids.push(grpcId);
        const message = toBinary(
          PutUserKeyRequestSchema,
          create(PutUserKeyRequestSchema, { userId: user.userId, publicKey: user.publicKey }),
        );
        const envelope = new Uint8Array(5 + message.length);
        new DataView(envelope.buffer).setUint32(1, message.length);
        envelope.set(message, 5);
        assert.equal(
          await grpcStatusOf(
            service.internalUrl,
            "/perps.token.v1.UserKeyService/PutUserKey",
            envelope,
            { ...operatorHeaders(), "x-request-id": grpcId },
          ),
          "0",
        );
        const lines = service.logs.map((text) => JSON.parse(text) as Record<string, unknown>);
        assert.deepEqual(
          lines.map((line) => [line.msg, line.audit, line.operator, line.requestId]),
          [
            ["audit", "PutUserKey", TEST_OPERATOR.name, ids[0]],
            ["audit", "RevokeUserTokens", TEST_OPERATOR.name, ids[1]],
            ["audit", "PutUserKey", TEST_OPERATOR.name, ids[2]],
          ],
          "the audit lines, and nothing below the level",
        );
        for (const line of lines) {
          assert.match(String(line.peer), /^(::ffff:)?127\.0\.0\.1$/);
        }
      } finally {
        await service.stop();
      }
    });
  }
});

/** The HTTP status of ListUserKeys on the internal listener with this secret. */
async function listStatus(internalUrl: string, secret: string): Promise<number> {
  const res = await fetch(`${internalUrl}/perps.token.v1.UserKeyService/ListUserKeys`, {
    method: "POST",
    headers: { "content-type": "application/json", ...operatorHeaders(secret) },
    body: JSON.stringify({ userId: randomUUID() }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Polls until `check` holds (the credentials file is looked at every second). */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `not within 10 s: ${what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

describe("ADMIN_CREDENTIALS_FILE and the generated operator (npm start)", () => {
  let redis: Awaited<ReturnType<typeof startTestRedisServer>>;
  let dir: string;

  before(async () => {
    redis = await startTestRedisServer();
    dir = mkdtempSync(join(tmpdir(), "perps-operators-test-"));
  });
  after(async () => {
    killMainProcesses();
    await redis?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  async function started(
    env: Record<string, string>,
    cwd?: string,
  ): Promise<{ run: MainProcess; internalUrl: string }> {
    const run = startMainProcess(
      { REDIS_URL: redis.url, PUBLIC_PORT: "0", INTERNAL_PORT: "0", ...env },
      cwd,
    );
    const [match] = await run.waitFor(/"internalPort":(\d+)/);
    return { run, internalUrl: `http://127.0.0.1:${match?.[1]}` };
  }

  async function stopped(run: MainProcess): Promise<void> {
    run.child.kill("SIGTERM");
    assert.equal(await run.exitedWithin(), 0);
  }

  it("a bad file stops the start with exit 2, naming the line but not its text", async () => {
    const file = join(dir, "bad-credentials");
    writeFileSync(
      file,
      `# operators\n${credentialsText([TEST_OPERATOR])}alice op_pasted-secret-by-mistake\n`,
    );
    const run = startMainProcess({
      ADMIN_CREDENTIALS_FILE: file,
      REDIS_URL: redis.url,
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
    });
    assert.equal(await run.exitedWithin(), 2);
    assert.match(
      run.output(),
      new RegExp(`ADMIN_CREDENTIALS_FILE ${file} line 3: expected "<operator name> sha256:`),
    );
    assert.doesNotMatch(run.output(), /pasted-secret/);
    const missing = startMainProcess({
      ADMIN_CREDENTIALS_FILE: join(dir, "none"),
      REDIS_URL: redis.url,
    });
    assert.equal(await missing.exitedWithin(), 2);
    assert.match(missing.output(), /ADMIN_CREDENTIALS_FILE: cannot read .*none \(ENOENT\)/);
    // SERVICE_CREDENTIALS_FILE has the same format and the same check.
    const services = join(dir, "bad-services");
    writeFileSync(services, "edge sha256:abc\n");
    const badServices = startMainProcess({
      SERVICE_CREDENTIALS_FILE: services,
      REDIS_URL: redis.url,
      PUBLIC_PORT: "0",
      INTERNAL_PORT: "0",
    });
    assert.equal(await badServices.exitedWithin(), 2);
    assert.match(badServices.output(), new RegExp(`SERVICE_CREDENTIALS_FILE ${services} line 1: `));
  });

  it("is re-read when it changes and on SIGHUP; a file broken meanwhile keeps the operators", async () => {
    const file = join(dir, "live-credentials");
    const alice = { name: "alice", secret: `op_alice-${randomUUID()}` };
    const bob = { name: "bob", secret: `op_bob-${randomUUID()}` };
    writeFileSync(file, credentialsText([alice]));
    const { run, internalUrl } = await started({ ADMIN_CREDENTIALS_FILE: file });
    assert.equal(await listStatus(internalUrl, alice.secret), 200);
    assert.equal(await listStatus(internalUrl, bob.secret), 401);
    // Bob added: no restart.
    writeFileSync(file, credentialsText([alice, bob]));
    await eventually(async () => (await listStatus(internalUrl, bob.secret)) === 200, "bob let in");
    // A broken file is refused (logged); bob and alice still get in.
    writeFileSync(file, "bob sha256:nothex\n");
    run.child.kill("SIGHUP");
    await run.waitFor(/credentials file refused; operators kept/);
    assert.match(run.output(), /line 1/);
    assert.equal(await listStatus(internalUrl, bob.secret), 200);
    // Bob removed, told by SIGHUP: out at once.
    writeFileSync(file, credentialsText([alice]));
    run.child.kill("SIGHUP");
    await eventually(async () => (await listStatus(internalUrl, bob.secret)) === 401, "bob out");
    assert.equal(await listStatus(internalUrl, alice.secret), 200);
    // Lines reach stdout in batches.
    await run.waitFor(/"msg":"audit"/, 4);
    const audit = run
      .output()
      .split("\n")
      .filter((line) => line.includes('"msg":"audit"'));
    assert.ok(
      audit.every((line) => /"operator":"(alice|bob)"/.test(line)),
      audit.join("\n"),
    );
    await stopped(run);
  });

  it("with none configured, the first start writes operator local in the data folder and says where", async () => {
    const cwd = mkdtempSync(join(dir, "fresh-"));
    const { run, internalUrl } = await started({ ADMIN_CREDENTIALS_FILE: "", WORKERS: "2" }, cwd);
    const secretFile = join(cwd, ".data/redis/operator-secret");
    const credentialsFile = join(cwd, ".data/redis/admin-credentials");
    // Every line of the start is written before the ready line.
    await run.waitFor(/perps-token-service ready/);
    const said = run
      .output()
      .split("\n")
      .filter((line) => line.includes("generated operator"));
    assert.equal(said.length, 1, run.output());
    // A log line like the others (JSON on stdout), naming both files.
    const line = JSON.parse(said[0] ?? "") as Record<string, unknown>;
    assert.equal(line.level, 40);
    assert.equal(line.operator, "local");
    assert.equal(line.secretFile, secretFile);
    assert.equal(line.credentialsFile, credentialsFile);
    assert.match(
      String(line.msg),
      new RegExp(`generated operator local, its secret in ${secretFile}`),
    );
    assert.equal(statSync(secretFile).mode & 0o777, 0o600);
    const secret = readFileSync(secretFile, "utf8").trim();
    assert.match(readFileSync(credentialsFile, "utf8"), /^local sha256:[0-9a-f]{64}$/m);
    assert.doesNotMatch(run.output(), new RegExp(secret));
    // Both workers know it (the primary wrote it before forking them).
    for (let i = 0; i < 4; i++) {
      assert.equal(await listStatus(internalUrl, secret), 200);
    }
    assert.equal(await listStatus(internalUrl, WRONG_SECRET), 401);
    await stopped(run);
    // The next start keeps it, and says nothing.
    const again = await started({ ADMIN_CREDENTIALS_FILE: "" }, cwd);
    assert.equal(readFileSync(secretFile, "utf8").trim(), secret);
    assert.doesNotMatch(again.run.output(), /generated operator/);
    assert.equal(await listStatus(again.internalUrl, secret), 200);
    await stopped(again.run);
  });
});
