import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { restCreated } from "../../../bench/create-answers.js";
import { runRawHttpLoad } from "../../../bench/raw-http-load.js";

/**
 * Answers a create by its body: "ok" → 201 with a token (content-length),
 * "chunked" → 201 with a token, chunked, "nothing" → 201 without a token,
 * else 401 chunked (as grpc-gateway v1 sends its errors).
 */
function startServer(): Promise<{ server: Server; url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method === "GET") {
        bodies.push(req.headers.authorization ?? "");
        res.writeHead(req.headers.authorization === "Bearer t2" ? 401 : 200).end();
        return;
      }
      const body = Buffer.concat(chunks).toString();
      bodies.push(body);
      const answer = JSON.stringify({ id: "x", token: "pt_y" });
      if (body === "ok") {
        res.writeHead(201, { "content-length": Buffer.byteLength(answer) }).end(answer);
      } else if (body === "chunked") {
        res.writeHead(201);
        res.write(answer.slice(0, 5));
        res.end(answer.slice(5));
      } else if (body === "nothing") {
        res.writeHead(201, { "content-length": 2 }).end("{}");
      } else {
        res.writeHead(401);
        res.end('{"error":"Invalid signature"}');
      }
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}`, bodies });
    }),
  );
}

describe("runRawHttpLoad", () => {
  let target: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    target = await startServer();
  });
  after(() => target.server.close());

  it("sends every body once and counts only the answers it accepts, chunked ones included", async () => {
    target.bodies.length = 0;
    const bodies = [...Array(30).fill("ok"), ...Array(20).fill("chunked"), "nothing", "bad", "bad"];
    const result = await runRawHttpLoad({
      url: target.url,
      method: "POST",
      path: "/user/tokens",
      bodies,
      connections: 4,
      accept: restCreated,
    });
    assert.equal(result.sent, bodies.length);
    assert.equal(result.ok, 50);
    assert.deepEqual(result.failures, { "201": 1, "401": 2 });
    assert.deepEqual([...target.bodies].sort(), [...bodies].sort());
  });

  it("stops sending when its time is up, and waits for the answers on their way", async () => {
    const result = await runRawHttpLoad({
      url: target.url,
      method: "POST",
      path: "/user/tokens",
      bodies: Array(1_000_000).fill("ok"),
      connections: 2,
      seconds: 0.2,
      accept: restCreated,
    });
    assert.ok(result.sent < 1_000_000);
    assert.equal(result.ok + result.errors, result.sent);
    assert.equal(result.errors, 0);
  });

  it("sends bearer tokens in turn, again from the first, until its time is up", async () => {
    target.bodies.length = 0;
    const result = await runRawHttpLoad({
      url: target.url,
      method: "GET",
      path: "/auth",
      bodies: [],
      bearerTokens: ["t0", "t1", "t2"],
      connections: 1,
      seconds: 0.2,
    });
    assert.ok(result.sent > 3);
    assert.deepEqual(target.bodies.slice(0, 4), [
      "Bearer t0",
      "Bearer t1",
      "Bearer t2",
      "Bearer t0",
    ]);
    assert.equal(result.failures["401"], target.bodies.filter((b) => b === "Bearer t2").length);
    assert.equal(result.ok + result.errors, result.sent);
  });
});
