import assert from "node:assert/strict";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import {
  rawHttp1StatusAnswer,
  type StatusAnswer,
  type WriteOptions,
  writeStatusAnswer,
} from "../../../src/status/status-answer.js";

/** The head and body a client gets for `answer`, over HTTP/1.1. */
async function received(
  answer: StatusAnswer,
  opts: WriteOptions = {},
  method = "GET",
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const server = createServer((_req, res) => writeStatusAnswer(res, answer, opts));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise((resolve, reject) => {
      request({ port, method, host: "127.0.0.1" }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      })
        .on("error", reject)
        .end();
    });
  } finally {
    server.close();
  }
}

const NOT_FOUND: StatusAnswer = { status: 404, code: Code.NotFound, message: "no such resource" };
const BODY = '{"code":5,"message":"no such resource","details":[]}';

describe("status answers", () => {
  it("writes the google.rpc.Status JSON with its type, length and extra headers", async () => {
    const got = await received({ ...NOT_FOUND, headers: { "cache-control": "no-store" } });
    assert.equal(got.status, 404);
    assert.equal(got.body, BODY);
    assert.equal(got.headers["content-type"], "application/json");
    assert.equal(got.headers["content-length"], String(BODY.length));
    assert.equal(got.headers["cache-control"], "no-store");
  });

  it("unsized: no content-length, the body chunked", async () => {
    const got = await received({ ...NOT_FOUND, unsized: true });
    assert.equal(got.body, BODY);
    assert.equal(got.headers["content-length"], undefined);
    assert.equal(got.headers["transfer-encoding"], "chunked");
  });

  it("head only: the body's length, no body", async () => {
    const got = await received(NOT_FOUND, { headOnly: true }, "HEAD");
    assert.equal(got.body, "");
    assert.equal(got.headers["content-length"], String(BODY.length));
  });

  it("as raw HTTP/1.1 text for a bare socket, closing the connection", () => {
    assert.equal(
      rawHttp1StatusAnswer({ ...NOT_FOUND, headers: { "x-request-id": "r1" } }),
      [
        "HTTP/1.1 404 Not Found",
        "content-type: application/json",
        `content-length: ${BODY.length}`,
        "x-request-id: r1",
        "connection: close",
        "",
        BODY,
      ].join("\r\n"),
    );
  });
});
