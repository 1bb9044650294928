import assert from "node:assert/strict";
import { connect as connectH2, type IncomingHttpHeaders } from "node:http2";
import { before } from "node:test";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { lateValue } from "./late-value.js";
import { samples } from "./prometheus-samples.js";
import { requestLines } from "./request-lines.js";
import { serviceSuite } from "./service-suite.js";
import { newUser, type TestUser } from "./signing.js";
import { createOperatorGrpcClient } from "./test-operator.js";

export const CREATE = "perps.token.v1.TokenService/CreateToken";
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface Labels {
  method: string;
  protocol: string;
  /** The metric's code label, e.g. "invalid_argument". */
  code: string;
}

/** What the log line says of the code: "ok" or the Code's name. */
export const CODE_NAMES: Record<string, string> = {
  ok: "ok",
  invalid_argument: "InvalidArgument",
  not_found: "NotFound",
  unimplemented: "Unimplemented",
};

export interface Answer {
  status: number;
  /** The x-request-id response header. */
  requestId: string | undefined;
}

/** A gRPC / gRPC-Web message envelope. */
export function envelope(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
}

export interface H2Answer {
  headers: IncomingHttpHeaders;
  trailers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request over HTTP/2 with prior knowledge (as gRPC clients send it), answer and trailers read in full. */
export function h2Request(
  baseUrl: string,
  headers: Record<string, string>,
  body: Uint8Array,
): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const session = connectH2(baseUrl);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", te: "trailers", ...headers });
    let responseHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      responseHeaders = h;
    });
    stream.on("trailers", (t) => {
      trailers = t;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", reject);
    stream.on("end", () => {
      session.close();
      resolve({ headers: responseHeaders, trailers, body: Buffer.concat(chunks) });
    });
    stream.end(body);
  });
}

export function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

/**
 * The service of a refusal-telemetry suite and its checks that an answer is
 * observed (request id, one log line, one count); call it inside the suite's describe.
 */
export function refusalTelemetrySuite() {
  const { service } = serviceSuite({
    // Debug: health probes' lines are debug lines (the next suite checks info).
    logLevel: "debug",
  });
  const [user, setUser] = lateValue<TestUser>("user");
  // GET /metrics answers are themselves counted ({method="http",protocol="http",code="ok"}).
  let metricsReads = 0;
  let nextId = 0;

  before(async () => {
    setUser(await newUser());
    const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    try {
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    } finally {
      keys.close();
    }
  });

  const seriesName = (l: Labels) =>
    `perps_token_requests_total{method="${l.method}",protocol="${l.protocol}",code="${l.code}"}`;

  /**
   * The count of a series read from GET /metrics on the internal listener,
   * less the earlier /metrics reads when the series is theirs.
   */
  async function count(labels: Labels): Promise<number> {
    const res = await fetch(`${service.internalUrl}/metrics`);
    assert.equal(res.status, 200);
    const value = samples(await res.text()).get(seriesName(labels)) ?? 0;
    const earlierReads = metricsReads;
    metricsReads++;
    const isMetricsSeries =
      labels.method === "http" && labels.protocol === "http" && labels.code === "ok";
    return isMetricsSeries ? value - earlierReads : value;
  }

  /** The log lines (parsed) that carry this request id. */
  function linesOf(requestId: string): Record<string, unknown>[] {
    return requestLines(service, requestId);
  }

  /**
   * Sends one request (with an acceptable x-request-id of ours, or with
   * `given` as the header, or none) and checks the three: the id in the
   * response header, exactly one log line with it, exactly one count.
   */
  async function expectObserved(
    labels: Labels,
    send: (requestId: string | undefined) => Promise<Answer>,
    opts: { status?: number; given?: string | null } = {},
  ): Promise<void> {
    const own = `refusal-${process.pid}-${nextId++}`;
    const given = opts.given === undefined ? own : (opts.given ?? undefined);
    const before = await count(labels);
    const answer = await send(given);
    if (opts.status !== undefined) {
      assert.equal(answer.status, opts.status);
    }
    const requestId = answer.requestId;
    assert.ok(requestId !== undefined, "the answer has no x-request-id");
    if (given === own) {
      assert.equal(requestId, own, "the caller's acceptable id is echoed");
    } else {
      assert.match(requestId, UUID, "a new UUID when the caller's id is missing or unacceptable");
    }
    let after = await count(labels);
    for (let i = 0; i < 50 && after < before + 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await count(labels);
    }
    assert.equal(after, before + 1, `${seriesName(labels)} counted once`);
    const lines = linesOf(requestId);
    assert.equal(lines.length, 1, `one log line for ${requestId}: ${JSON.stringify(lines)}`);
    const [line] = lines;
    assert.equal(line?.method, labels.method);
    assert.equal(line?.protocol, labels.protocol);
    assert.equal(line?.code, CODE_NAMES[labels.code]);
    assert.equal(typeof line?.ms, "number");
    if (labels.code !== "ok") {
      assert.equal(typeof line?.message, "string");
      assert.notEqual(line?.message, "");
    }
  }

  const idHeader = (requestId: string | undefined): Record<string, string> =>
    requestId === undefined ? {} : { "x-request-id": requestId };

  function rest(
    path: string,
    init: { method?: string; contentType?: string; body?: string | Uint8Array } = {},
  ) {
    return async (requestId: string | undefined): Promise<Answer> => {
      const res = await fetch(`${service.publicUrl}${path}`, {
        method: init.method ?? "POST",
        headers: {
          ...(init.contentType === undefined ? {} : { "content-type": init.contentType }),
          ...idHeader(requestId),
        },
        ...(init.body === undefined ? {} : { body: init.body }),
      });
      await res.arrayBuffer();
      return { status: res.status, requestId: res.headers.get("x-request-id") ?? undefined };
    };
  }

  function h2(
    baseUrl: () => string,
    path: string,
    contentType: string,
    body: Uint8Array,
    check?: (answer: H2Answer) => void,
  ) {
    return async (requestId: string | undefined): Promise<Answer> => {
      const answer = await h2Request(
        baseUrl(),
        { ":path": path, "content-type": contentType, ...idHeader(requestId) },
        body,
      );
      check?.(answer);
      return {
        status: Number(answer.headers[":status"]),
        requestId: header(answer.headers["x-request-id"]),
      };
    };
  }

  const malformed = envelope(Uint8Array.of(0xff, 0xff, 0xff));
  const invalid = (method: string, protocol: string): Labels => ({
    method,
    protocol,
    code: "invalid_argument",
  });

  return { service, user, count, linesOf, expectObserved, idHeader, rest, h2, malformed, invalid };
}
