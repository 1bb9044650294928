import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import type { Endpoint } from "../../../src/http/endpoint.js";
import { requestPath } from "../../../src/http/request-path.js";
import { attachExchange, Exchange } from "../../../src/server/exchange.js";
import { askEndpoints } from "../../../src/server/listener-handler.js";

/** An endpoint answering 200 at `path`. */
function at(path: string, labels: Omit<Endpoint, "answer"> = {}): Endpoint {
  return {
    answer: (req, res) => {
      if (requestPath(req) !== path) {
        return false;
      }
      res.end("ok");
      return true;
    },
    ...labels,
  };
}

/** The exchange of one GET of `path`, asked of `endpoints`, and whether one answered. */
async function asked(endpoints: readonly Endpoint[], path: string) {
  const ask = askEndpoints(endpoints);
  const exchange = new Exchange("id", 0);
  let answered = false;
  const server = createServer((req, res) => {
    attachExchange(req, exchange);
    answered = ask(req, res);
    if (!answered) {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`)).text();
    return { answered, exchange };
  } finally {
    server.close();
  }
}

describe("a listener's endpoints", () => {
  const endpoints = [
    at("/healthz", { probe: true }),
    at("/auth", { label: "forward-auth" }),
    at("/metrics"),
  ];

  it("are asked in order, and the one that answers labels the exchange", async () => {
    const auth = await asked(endpoints, "/auth");
    assert.equal(auth.answered, true);
    assert.equal(auth.exchange.method, "forward-auth");
    assert.equal(auth.exchange.probe, false);
  });

  it("mark a probe's exchange, and leave an unlabelled endpoint's as plain HTTP", async () => {
    const probe = await asked(endpoints, "/healthz");
    assert.equal(probe.exchange.probe, true);
    assert.equal(probe.exchange.method, "http");
    const metrics = await asked(endpoints, "/metrics");
    assert.equal(metrics.answered, true);
    assert.equal(metrics.exchange.method, "http");
    assert.equal(metrics.exchange.probe, false);
  });

  it("leave a request none of them answers untouched", async () => {
    const other = await asked(endpoints, "/other");
    assert.equal(other.answered, false);
    assert.equal(other.exchange.method, "http");
  });
});
