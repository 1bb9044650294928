import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createLogger } from "../../../src/log/logger.js";
import { createRequestLineWriter, type RequestLineFields } from "../../../src/log/request-line.js";

/** A logger of the service's (createLogger) writing into `lines`, child as answer-telemetry.ts makes it. */
function loggerInto(lines: string[], level = "info") {
  return createLogger({ level, destination: { write: (line: string) => lines.push(line) } }).child(
    {},
    { redact: [] },
  );
}

/** The line without its time, which the two writers read at different instants. */
const timeless = (line: string | undefined) => line?.replace(/"time":\d+/, '"time":0');

describe("request line", () => {
  const cases: RequestLineFields[] = [
    {
      method: "perps.token.v1.TokenIntrospectionService/IntrospectToken",
      protocol: "grpc",
      requestId: "0d6c8a44-3c0e-4a39-9d0b-6a1f2b3c4d5e",
      code: "ok",
      ms: 0,
    },
    {
      method: 'a "quoted" \\ label\n',
      protocol: "rest",
      requestId: "r.1:x-y",
      code: "ok",
      ms: 1234,
    },
  ];
  for (const fields of cases) {
    it(`writes the bytes pino writes for logger.info(fields, "request"): ${fields.method.slice(0, 20)}`, () => {
      const byPino: string[] = [];
      const byHand: string[] = [];
      loggerInto(byPino).info(fields, "request");
      createRequestLineWriter(loggerInto(byHand))(fields);
      assert.equal(byHand.length, 1);
      assert.equal(timeless(byHand[0]), timeless(byPino[0]));
      assert.deepEqual(JSON.parse(byHand[0] ?? ""), {
        ...JSON.parse(byPino[0] ?? ""),
        time: JSON.parse(byHand[0] ?? "").time,
      });
    });
  }

  it("writes nothing when the logger's level is above info", () => {
    const lines: string[] = [];
    createRequestLineWriter(loggerInto(lines, "warn"))(cases[0] as RequestLineFields);
    assert.deepEqual(lines, []);
  });
});
