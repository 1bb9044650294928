// Cost per call of the request shape rules (buf.validate, run by the
// @bufbuild/protovalidate runtime) on a typical CreateTokenRequest, on one
// thread: with the runtime's default RE2 engine, with patterns as RegExp (what
// the service runs, src/validation/validation-interceptor.ts), and the whole
// check of a create before the time window (validator, then
// src/token/request-rules.ts).
// `npx tsx bench/validator-cost.ts`; BENCH_SECONDS (default 2) per row.
import { create } from "@bufbuild/protobuf";
import { createValidator } from "@bufbuild/protovalidate";
import { CreateTokenRequestSchema } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { checkCreateRequest } from "../src/token/request-rules.js";
import { createRequestValidator } from "../src/validation/validation-interceptor.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? "2");
const request = create(CreateTokenRequestSchema, {
  signature: "3f".repeat(64),
  timestamp: BigInt(Date.now()),
  userId: "0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab",
  expiresIn: 2_592_000n,
  name: "trading-bot",
});
const re2 = createValidator();
const service = createRequestValidator();
const rules = { maxLifetimeSeconds: 31_536_000 };

function measure(name: string, check: () => boolean) {
  // Warm up: the validator plans each message type on first use, the JIT settles.
  for (let i = 0; i < 20_000; i++) check();
  const deadline = performance.now() + SECONDS * 1000;
  let count = 0;
  const started = performance.now();
  while (performance.now() < deadline) {
    for (let i = 0; i < 1000; i++) {
      if (!check()) {
        throw new Error(`${name}: a valid request was refused`);
      }
    }
    count += 1000;
  }
  const perCall = ((performance.now() - started) * 1000) / count;
  return { name, microseconds: +perCall.toFixed(2), perSecond: Math.round(1e6 / perCall) };
}

console.table([
  measure("protovalidate, RE2 patterns (runtime default)", () => {
    return re2.validate(CreateTokenRequestSchema, request).kind === "valid";
  }),
  measure("protovalidate, RegExp patterns (shipped)", () => {
    return service.problems(CreateTokenRequestSchema, request).length === 0;
  }),
  measure("shipped + request-rules.ts (whole shape check)", () => {
    return (
      service.problems(CreateTokenRequestSchema, request).length === 0 &&
      checkCreateRequest(request, rules).lifetimeSeconds > 0
    );
  }),
]);
