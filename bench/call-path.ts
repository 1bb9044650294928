// `npm run bench:path`: which hand-written modules of the service one call runs, measured rather
// than read from the code (the structure targets of issue 41: one check on the lane, one REST
// create). The service runs twice at WORKERS=1 under NODE_V8_COVERAGE, with the same warm-up, the
// second time with CALLS more calls of the kind; a function of src/ that ran at least CALLS times
// more is on that call's path, and its file is counted. Writes bench/results/call-path.md.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newBenchUsers, registerUsers } from "./bench-users.js";
import { INTROSPECT_PATH, introspectFrames } from "./check-loads.js";
import { startBenchRedis } from "./redis-server.js";
import { runMain } from "./run-main.js";
import { startServiceProcess } from "./service-process.js";
import { createSigner } from "./signed-requests.js";

/** Calls of the kind the second run makes more: enough that a periodic timer's runs fall short. */
const CALLS = 25;
const WARM_UP = 5;

interface Kind {
  readonly name: string;
  /** Makes `count` calls of the kind, one after another. */
  calls(service: Urls, count: number): Promise<void>;
}

interface Urls {
  readonly publicUrl: string;
  readonly internalUrl: string;
  /** A live token, created at start. */
  readonly token: string;
  readonly create: () => Promise<string>;
}

/** V8's coverage of one process: each function's call count, by `file#name@offset`. */
interface Coverage {
  result: {
    url: string;
    functions: { functionName: string; ranges: { count: number; startOffset: number }[] }[];
  }[];
}

async function grpcChecks(address: string, token: string, count: number): Promise<void> {
  const session = connect(address);
  const [frame] = introspectFrames([token]);
  try {
    for (let i = 0; i < count; i++) {
      await new Promise<void>((resolve, reject) => {
        const stream = session.request({
          ":method": "POST",
          ":path": INTROSPECT_PATH,
          "content-type": "application/grpc",
          te: "trailers",
        });
        stream.on("data", () => {});
        stream.on("end", resolve);
        stream.on("error", reject);
        stream.end(frame);
      });
    }
  } finally {
    session.close();
  }
}

const KINDS: readonly Kind[] = [
  {
    name: "IntrospectToken over gRPC, a cached live token (the lane)",
    calls: (urls, count) => grpcChecks(urls.internalUrl, urls.token, count),
  },
  {
    name: "GET /auth, a cached live token (the lane)",
    async calls(urls, count) {
      for (let i = 0; i < count; i++) {
        const res = await fetch(`${urls.internalUrl}/auth`, {
          headers: { authorization: `Bearer ${urls.token}` },
        });
        await res.arrayBuffer();
      }
    },
  },
  {
    name: "REST create (POST /user/tokens)",
    async calls(urls, count) {
      for (let i = 0; i < count; i++) {
        await urls.create();
      }
    },
  },
];

/** Each src function's call count in one run of the service: warm-up, then `extra` calls. */
async function runCounts(
  redisUrl: string,
  kind: Kind,
  extra: number,
): Promise<Map<string, number>> {
  const covDir = mkdtempSync(join(tmpdir(), "perps-call-path-"));
  const service = await startServiceProcess({
    redisUrl,
    env: { WORKERS: "1", NODE_V8_COVERAGE: covDir },
  });
  try {
    const internalUrl = `http://127.0.0.1:${service.internalPort}`;
    const publicUrl = `http://127.0.0.1:${service.publicPort}`;
    const users = newBenchUsers(1);
    await registerUsers(internalUrl, users);
    const signer = createSigner(users);
    const create = async () => {
      const [request] = signer.creates(1);
      const res = await fetch(`${publicUrl}/user/tokens`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: request?.json ?? "",
      });
      const body = await res.text();
      if (res.status !== 201) {
        throw new Error(`create answered ${res.status}: ${body}`);
      }
      return (JSON.parse(body) as { token: string }).token;
    };
    const urls: Urls = { publicUrl, internalUrl, token: await create(), create };
    await kind.calls(urls, WARM_UP);
    await kind.calls(urls, extra);
  } finally {
    await service.stop();
  }
  const counts = new Map<string, number>();
  for (const file of readdirSync(covDir)) {
    const coverage = JSON.parse(readFileSync(join(covDir, file), "utf8")) as Coverage;
    for (const script of coverage.result) {
      const at = script.url.lastIndexOf("/dist/");
      if (at < 0 || script.url.includes("/node_modules/") || script.url.includes("/client/")) {
        continue;
      }
      const module = `src/${script.url.slice(at + "/dist/".length).replace(/\.js$/, ".ts")}`;
      for (const fn of script.functions) {
        const range = fn.ranges[0];
        if (range !== undefined) {
          counts.set(`${module}#${fn.functionName}@${range.startOffset}`, range.count);
        }
      }
    }
  }
  rmSync(covDir, { recursive: true, force: true });
  return counts;
}

/** The src files with a function that ran at least CALLS times more in the second run. */
function pathFiles(before: Map<string, number>, after: Map<string, number>): string[] {
  const files = new Set<string>();
  for (const [key, count] of after) {
    if (count - (before.get(key) ?? 0) >= CALLS) {
      files.add(key.slice(0, key.indexOf("#")));
    }
  }
  return [...files].sort();
}

await runMain("bench:path", async () => {
  const redis = await startBenchRedis();
  const lines = [
    "## The modules one call runs",
    "",
    `${new Date().toISOString()}, node ${process.version}, \`npm run bench:path\` (bench/call-path.ts): the service at WORKERS=1 under NODE_V8_COVERAGE, run twice with the same warm-up, the second time with ${CALLS} more calls; a hand-written module of src/ is listed when one of its functions ran at least ${CALLS} times more. The client package's protocol modules (\`@perps/token-client/protocol\`) and third-party code are not counted.`,
  ];
  try {
    for (const kind of KINDS) {
      const files = pathFiles(
        await runCounts(redis.url, kind, 0),
        await runCounts(redis.url, kind, CALLS),
      );
      process.stdout.write(`${kind.name}: ${files.length} files\n`);
      lines.push("", `### ${kind.name}: ${files.length} files`, "");
      lines.push(...files.map((file) => `- \`${file}\``));
    }
  } finally {
    await redis.stop();
  }
  writeFileSync(new URL("results/call-path.md", import.meta.url), `${lines.join("\n")}\n`);
});
