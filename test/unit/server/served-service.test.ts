import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  createConnectRouter,
  createRouterTransport,
} from "@connectrpc/connect";
import { TokenIntrospectionService } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus,
} from "../../../src/gen/health/v1/health_pb.js";
import {
  credentialedServices,
  restServedOn,
  servedOn,
  servedService,
} from "../../../src/server/served-service.js";

const serving = { check: () => ({ status: HealthCheckResponse_ServingStatus.SERVING }) };

describe("a served service", () => {
  it("declares no REST, no operator and no service credential unless told", () => {
    const health = servedService(Health, serving, { listeners: ["internal"] });
    assert.equal(health.service, Health);
    assert.deepEqual(health.listeners, ["internal"]);
    assert.deepEqual(health.rest, []);
    assert.equal(health.operatorOnly, false);
    assert.equal(health.serviceCredential, false);
  });

  it("registers its implementation on a router, and gives it to the REST gateway as a spec", async () => {
    const health = servedService(Health, serving, { listeners: ["public"] });
    const router = createConnectRouter();
    health.route(router);
    assert.deepEqual(
      router.handlers.map((h) => h.requestPath),
      Health.methods.map((m) => `/${Health.typeName}/${m.name}`),
    );
    const client = createClient(
      Health,
      createRouterTransport((r) => health.route(r)),
    );
    assert.equal((await client.check({})).status, HealthCheckResponse_ServingStatus.SERVING);
    const spec = health.spec();
    assert.equal(spec.service, Health);
    assert.equal(spec.methods.check.kind, "unary");
  });

  it("is registered with its own read limit when it has one", async () => {
    const limited = servedService(Health, serving, { listeners: ["public"], readMaxBytes: 8 });
    const client = createClient(
      Health,
      createRouterTransport((r) => limited.route(r)),
    );
    const large = create(HealthCheckRequestSchema, { service: "x".repeat(20) });
    assert.ok(toBinary(HealthCheckRequestSchema, large).length > 8);
    await assert.rejects(
      client.check(large),
      (err) => ConnectError.from(err).code === Code.ResourceExhausted,
    );
    assert.equal(
      (await client.check({ service: "ok" })).status,
      HealthCheckResponse_ServingStatus.SERVING,
    );
  });
});

describe("services by their declarations", () => {
  const token = servedService(
    TokenService,
    {},
    { listeners: ["public", "internal"], rest: ["public"] },
  );
  const keys = servedService(UserKeyService, {}, { listeners: ["internal"], operatorOnly: true });
  const introspection = servedService(
    TokenIntrospectionService,
    {},
    { listeners: ["internal"], serviceCredential: true },
  );
  const health = servedService(Health, serving, { listeners: ["internal"], rest: ["internal"] });
  const all = [token, keys, introspection, health];

  it("served on a listener, and REST-mapped on one", () => {
    assert.deepEqual(servedOn(all, "public"), [token]);
    assert.deepEqual(servedOn(all, "internal"), all);
    assert.deepEqual(restServedOn(all, "public"), [token]);
    assert.deepEqual(restServedOn(all, "internal"), [health]);
  });

  it("needing an operator, or a calling service's credential", () => {
    assert.deepEqual(credentialedServices(all), {
      adminServices: [UserKeyService],
      serviceCredentialServices: [TokenIntrospectionService],
    });
  });

  it("one that needs a credential has no way in that the call gate does not guard", () => {
    for (const credential of [{ operatorOnly: true }, { serviceCredential: true }]) {
      assert.throws(
        () =>
          servedService(
            UserKeyService,
            {},
            { listeners: ["internal"], rest: ["internal"], ...credential },
          ),
        /perps\.token\.v1\.UserKeyService needs a caller's credential, which REST does not ask/,
      );
      assert.throws(
        () => servedService(Health, serving, { listeners: ["internal"], ...credential }),
        /grpc\.health\.v1\.Health\/Watch streams, and the call gate asks credentials of unary calls only/,
      );
    }
  });
});
