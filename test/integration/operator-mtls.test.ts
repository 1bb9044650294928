import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:http2";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { killMainProcesses, startMainProcess } from "../support/main-process.js";
import { selfSignedCert } from "../support/self-signed-cert.js";
import { operatorHeaders, TEST_OPERATOR } from "../support/test-operator.js";
import { startTestRedis, startTestRedisServer, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// Issue 29: where TLS is on, operators may present a client certificate
// instead of a secret (ADMIN_CLIENT_CA_FILE); its subject's CN is their name.

const LIST = "/perps.token.v1.UserKeyService/ListUserKeys";

interface Pem {
  cert: string;
  key: string;
}

/** A CA (ca.pem, ca.key) made by openssl in `dir`, and a function issuing client certificates with it. */
function certificateAuthority(dir: string, name: string): { ca: string; issue(cn: string): Pem } {
  const file = (f: string) => join(dir, `${name}-${f}`);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  execFileSync("openssl", [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.pem"),
    "-days",
    "1",
    "-subj",
    `/CN=${name}`,
  ]);
  return {
    ca: readFileSync(file("ca.pem"), "utf8"),
    issue(cn) {
      execFileSync("openssl", [
        "req",
        ...ec,
        "-keyout",
        file(`${cn}.key`),
        "-out",
        file(`${cn}.csr`),
        "-subj",
        `/CN=${cn}`,
      ]);
      execFileSync("openssl", [
        "x509",
        "-req",
        "-in",
        file(`${cn}.csr`),
        "-CA",
        file("ca.pem"),
        "-CAkey",
        file("ca.key"),
        "-CAcreateserial",
        "-out",
        file(`${cn}.pem`),
        "-days",
        "1",
      ]);
      return {
        cert: readFileSync(file(`${cn}.pem`), "utf8"),
        key: readFileSync(file(`${cn}.key`), "utf8"),
      };
    },
  };
}

describe("mutual TLS for operators (ADMIN_CLIENT_CA_FILE)", () => {
  let dir: string;
  let redis: TestRedis;
  let service: TestService;
  let serverCert: Pem;
  let alice: Pem;
  let mallory: Pem;
  let impostor: Pem;
  let port: string;

  /** ListUserKeys over HTTPS/1.1 (Connect JSON) with this client certificate and headers. */
  function list(client: Pem | undefined, headers: Record<string, string> = {}): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          hostname: "127.0.0.1",
          port,
          path: LIST,
          method: "POST",
          ca: serverCert.cert,
          ...(client ?? {}),
          agent: false,
          headers: { "content-type": "application/json", ...headers },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify({ userId: randomUUID() }));
    });
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "perps-mtls-"));
    serverCert = await selfSignedCert(dir);
    const operators = certificateAuthority(dir, "operators");
    alice = operators.issue("alice");
    mallory = certificateAuthority(dir, "rogue").issue("mallory");
    // Another CA whose subject DN is the operators' CA's (/CN=operators), issuing "alice".
    mkdirSync(join(dir, "impostor"));
    impostor = certificateAuthority(join(dir, "impostor"), "operators").issue("alice");
    redis = await startTestRedis();
    service = await startTestService({
      redis: redis.topology,
      tls: serverCert,
      adminClientCa: operators.ca,
    });
    port = new URL(service.internalUrl).port;
  });
  after(async () => {
    killMainProcesses();
    await service?.stop();
    await redis?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("npm start: with only a client CA no operator is generated; without TLS, or unreadable, exit 2", async () => {
    const own = await startTestRedisServer();
    try {
      const cwd = mkdtempSync(join(dir, "start-"));
      writeFileSync(join(cwd, "cert.pem"), serverCert.cert);
      writeFileSync(join(cwd, "key.pem"), serverCert.key);
      writeFileSync(join(cwd, "ca.pem"), certificateAuthority(cwd, "ops").ca);
      const base = {
        REDIS_URL: own.url,
        PUBLIC_PORT: "0",
        INTERNAL_PORT: "0",
        ADMIN_CREDENTIALS_FILE: "",
      };
      const tls = { TLS_CERT_FILE: "cert.pem", TLS_KEY_FILE: "key.pem" };
      const run = startMainProcess({ ...base, ...tls, ADMIN_CLIENT_CA_FILE: "ca.pem" }, cwd);
      await run.waitFor(/"msg":"listening"/);
      assert.doesNotMatch(run.output(), /generated operator/);
      assert.equal(existsSync(join(cwd, ".data/redis/operator-secret")), false);
      run.child.kill("SIGTERM");
      assert.equal(await run.exitedWithin(), 0);
      const noTls = startMainProcess({ ...base, ADMIN_CLIENT_CA_FILE: "ca.pem" }, cwd);
      assert.equal(await noTls.exitedWithin(), 2);
      assert.match(noTls.output(), /ADMIN_CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE/);
      const missing = startMainProcess({ ...base, ...tls, ADMIN_CLIENT_CA_FILE: "none.pem" }, cwd);
      assert.equal(await missing.exitedWithin(), 2);
      assert.match(missing.output(), /ADMIN_CLIENT_CA_FILE: cannot read none\.pem/);
    } finally {
      await own.dispose();
    }
  });

  it("a certificate the CA issued names the operator; the audit line says alice", async () => {
    assert.equal(await list(alice), 200);
    await new Promise((done) => setTimeout(done, 50));
    const audit = service.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === "audit");
    assert.equal(audit.at(-1)?.operator, "alice");
  });

  it("no certificate, or one of another CA: UNAUTHENTICATED, unless the operator's secret is sent", async () => {
    assert.equal(await list(undefined), 401);
    assert.equal(await list(mallory), 401);
    assert.equal(await list(undefined, operatorHeaders()), 200);
    assert.equal(await list(mallory, operatorHeaders()), 200);
    const audit = service.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === "audit");
    assert.equal(audit.at(-1)?.operator, TEST_OPERATOR.name);
  });

  it("a certificate of another CA with the operators' CA's subject counts as none (issue 34)", async () => {
    // Its issuer's name matches the trusted CA, its signature does not: not an operator, and
    // not a dropped connection either (a clear 401, or 200 with the operator's secret).
    assert.equal(await list(impostor), 401);
    assert.equal(await list(impostor, operatorHeaders()), 200);
  });

  it("over gRPC (HTTP/2) too", async () => {
    const status = async (client: Pem | undefined) => {
      const session = connect(`https://127.0.0.1:${port}`, {
        ca: serverCert.cert,
        ...(client ?? {}),
      });
      try {
        return await new Promise<string>((resolve, reject) => {
          const stream = session.request({
            ":method": "POST",
            ":path": LIST,
            "content-type": "application/grpc",
          });
          let grpcStatus = "none";
          stream.on("response", (headers) => {
            grpcStatus = String(headers["grpc-status"] ?? grpcStatus);
          });
          stream.on("trailers", (trailers) => {
            grpcStatus = String(trailers["grpc-status"]);
          });
          stream.on("error", reject);
          stream.on("end", () => resolve(grpcStatus));
          stream.resume();
          stream.end(new Uint8Array(5));
        });
      } finally {
        session.close();
      }
    };
    // Past the operator check, the empty request meets its rules: INVALID_ARGUMENT.
    assert.equal(await status(alice), "3");
    assert.equal(await status(undefined), "16");
    assert.equal(await status(mallory), "16");
    assert.equal(await status(impostor), "16");
  });
});
