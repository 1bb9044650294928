import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  eventLoopLayers,
  GC_LAYER,
  parsePerfScript,
  UNATTRIBUTED,
} from "../../../bench/event-loop-layers.js";

const IOREDIS = "ioredis: the command, the pipeline, the socket write, the reply";
const GATEWAY = "REST gateway: routing, body, strict JSON, transcoding, headers, JSON answer";
const INVOKER = "Interceptors and invoker: request id, telemetry, error mapping";

describe("parsePerfScript", () => {
  it("reads one stack per sample, innermost frame first, without addresses", () => {
    const text = [
      "\t  14ce1f7 Builtins_ResumeGeneratorTrampoline",
      "\t  7f51931b1bf4 JS:*serve file:///app/src/rest/rest-gateway.ts:1:1133",
      "",
      "\t  c4993d v8::internal::Heap::CollectGarbage",
      "",
      "",
    ].join("\n");
    assert.deepEqual(parsePerfScript(text), [
      [
        "Builtins_ResumeGeneratorTrampoline",
        "JS:*serve file:///app/src/rest/rest-gateway.ts:1:1133",
      ],
      ["v8::internal::Heap::CollectGarbage"],
    ]);
  });
});

describe("eventLoopLayers", () => {
  it("counts a sample for the innermost layer on its stack", () => {
    // ioredis called from the token store: the time is ioredis'.
    const stack = [
      "Builtins_StringAdd_CheckNone",
      "JS:*toWritable /app/node_modules/ioredis/built/Command.js:111:15",
      "JS:*create file:///app/src/store/token-store.ts:1:1929",
      "JS:*serve file:///app/src/rest/rest-gateway.ts:1:1133",
    ];
    const [only] = eventLoopLayers([stack], 100);
    assert.deepEqual(only, { name: IOREDIS, microseconds: 100, share: 1 });
  });

  it("counts anything under a collection as GC, and splits the time by samples", () => {
    const gc = ["v8::internal::Scavenger::ScavengeObject", "v8::internal::Heap::CollectGarbage"];
    const gateway = ["JS:*readJsonBody file:///app/src/rest/rest-gateway.ts:1:2290"];
    const invoker = ["JS:*invoke file:///app/src/call/unary-invoker.ts:1:659"];
    const other = ["epoll_pwait", "uv__io_poll"];
    const layers = eventLoopLayers([gc, gc, gateway, invoker, [...gc, ...gateway], other], 120);
    assert.deepEqual(
      layers.map((l) => [l.name, l.microseconds]),
      [
        [GC_LAYER.name, 60],
        [GATEWAY, 20],
        [INVOKER, 20],
        [UNATTRIBUTED, 20],
      ],
    );
  });

  it("has nothing to split without samples", () => {
    assert.deepEqual(eventLoopLayers([], 100), []);
  });
});
