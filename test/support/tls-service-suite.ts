import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { lateValue } from "./late-value.js";
import { selfSignedCert } from "./self-signed-cert.js";
import type { TestRedis } from "./test-redis.js";
import { startTestService, type TestService, type TestServiceOptions } from "./test-service.js";

export interface TlsServiceSuite {
  readonly service: TestService;
  /** The service's self-signed certificate and key (PEM); `cert` is the CA a client trusts. */
  readonly pems: { readonly cert: string; readonly key: string };
}

/**
 * A service serving TLS on both listeners with a new self-signed certificate,
 * on a Redis of `startRedis`, for the tests of the describe block that calls
 * this: started before its first test, stopped after its last.
 */
export function tlsServiceSuite(
  startRedis: () => Promise<TestRedis>,
  opts: Omit<TestServiceOptions, "redis" | "tls"> = {},
): TlsServiceSuite {
  const [service, setService] = lateValue<TestService>("service");
  const [pems, setPems] = lateValue<{ cert: string; key: string }>("pems");
  let dir: string;
  let redis: TestRedis;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "perps-tls-"));
    const made = await selfSignedCert(dir);
    setPems(made);
    redis = await startRedis();
    setService(await startTestService({ ...opts, redis: redis.topology, tls: made }));
  });
  after(async () => {
    await service.stop();
    await redis.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  return { service, pems };
}
