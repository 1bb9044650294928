import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { TokenIntrospectionService } from "@perps/token-client/contract/perps/token/v1/token_introspection_pb.js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { connectCodeName } from "@perps/token-client/protocol";
import { parse } from "yaml";
import { createGrpcClient } from "../support/grpc-client.js";
import { restJson } from "../support/rest-json.js";
import { newUser, signedCreate, signedDelete } from "../support/signing.js";
import { createOperatorGrpcClient } from "../support/test-operator.js";
import { startTestRedisServer, type TestRedis } from "../support/test-redis.js";
import { startTestService, type TestService } from "../support/test-service.js";

// The alerts and the dashboard in deploy/: promtool checks the rules and runs
// their unit tests, and every metric, label and label value that a rule or a
// panel names must be one the service exports after real traffic (every
// protocol, refusals, rate limits, a Redis outage), so that a renamed metric
// cannot leave an alert that never fires.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const RULES_DIR = join(ROOT, "deploy", "prometheus");
const RULES = join(RULES_DIR, "perps-token-rules.yml");
const DASHBOARD = join(ROOT, "deploy", "grafana", "perps-token-dashboard.json");

/** Labels Prometheus adds to every scraped series (the scrape job is named perps-token). */
const TARGET_LABELS = ["job", "instance"];
/** Metrics Prometheus itself makes. */
const PROMETHEUS_METRICS = new Map([["up", new Set(TARGET_LABELS)]]);
const CODE_NAMES = new Set(
  Object.values(Code)
    .filter((value): value is Code => typeof value === "number")
    .map((code) => connectCodeName(code)),
);
const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "offset",
]);

function promtool(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync("promtool", args, { cwd: RULES_DIR, encoding: "utf8" });
  if (run.error !== undefined) {
    assert.fail(`promtool did not run (${run.error.message}): install Debian's prometheus`);
  }
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** One metric family of the exposition: its type and each label's values. */
interface Family {
  type: string;
  labels: Map<string, Set<string>>;
}

function exposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    families.set(name ?? "", { type: type ?? "", labels: new Map() });
  }
  for (const [, series, labels] of text.matchAll(/^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? \S+$/gm)) {
    const family = familyOf(families, series ?? "");
    for (const [, label, value] of (labels ?? "").matchAll(/(\w+)="([^"]*)"/g)) {
      const values = family?.labels.get(label ?? "") ?? new Set<string>();
      values.add(value ?? "");
      family?.labels.set(label ?? "", values);
    }
  }
  return families;
}

/** A series name's family: itself, or a histogram's for its _bucket, _sum and _count. */
function familyOf(families: Map<string, Family>, series: string): Family | undefined {
  const exact = families.get(series);
  if (exact !== undefined) {
    return exact;
  }
  const base = series.replace(/_(bucket|sum|count)$/, "");
  const family = families.get(base);
  return family?.type === "histogram" ? family : undefined;
}

/** An expression as a list of problems: names and values the service does not export. */
function problemsOf(
  expr: string,
  families: Map<string, Family>,
  recorded: Set<string>,
  extraLabels: Set<string>,
): string[] {
  const problems: string[] = [];
  const known = new Set([...TARGET_LABELS, "le", ...extraLabels]);
  for (const family of families.values()) {
    for (const label of family.labels.keys()) {
      known.add(label);
    }
  }
  // Grouping labels: by (...), without (...), on (...), ignoring (...).
  let rest = expr.replace(
    /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g,
    (_all, _kw, list: string) => {
      for (const label of list.split(",").map((l) => l.trim())) {
        if (label !== "" && !known.has(label)) {
          problems.push(`grouping label ${label} is not exported`);
        }
      }
      return " ";
    },
  );
  // Range durations, e.g. [5m] or Grafana's [$__rate_interval].
  rest = rest.replace(/\[[^\]]*\]/g, " ");
  const selector = /(?<![\w.$])([a-zA-Z_:][\w:]*)\s*(\{[^}]*\})?\s*(\()?/g;
  for (const [, name = "", matchers, call] of rest.matchAll(selector)) {
    if (call !== undefined || KEYWORDS.has(name)) {
      continue;
    }
    if (name.includes(":")) {
      if (!recorded.has(name)) {
        problems.push(`${name} is recorded by no rule`);
      }
      continue;
    }
    const prometheusLabels = PROMETHEUS_METRICS.get(name);
    const family = familyOf(families, name);
    if (prometheusLabels === undefined && family === undefined) {
      problems.push(`metric ${name} is not exported`);
      continue;
    }
    for (const [, label = "", op, value = ""] of (matchers ?? "").matchAll(
      /(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g,
    )) {
      if (TARGET_LABELS.includes(label)) {
        continue;
      }
      const values = family?.labels.get(label);
      if (values === undefined) {
        problems.push(`${name} has no label ${label}`);
        continue;
      }
      const wanted = op === "=~" || op === "!~" ? value.split("|") : [value];
      for (const one of wanted) {
        // A code is valid if it is a gRPC code's name; any other value must have been seen.
        const exists = label === "code" ? CODE_NAMES.has(one) : values.has(one);
        if (!exists || (op === "=" && !values.has(one))) {
          problems.push(`${name}{${label}="${one}"} is not exported after the traffic`);
        }
      }
    }
  }
  return problems;
}

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  labels?: Record<string, string>;
}

function rules(): Rule[] {
  const doc = parse(readFileSync(RULES, "utf8")) as { groups: { rules: Rule[] }[] };
  return doc.groups.flatMap((group) => group.rules);
}

interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
}

function panels(): Panel[] {
  return (JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: Panel[] }).panels;
}

describe("deploy/prometheus rules", () => {
  it("pass promtool check rules", () => {
    const run = promtool("check", "rules", "perps-token-rules.yml");
    assert.equal(run.status, 0, run.output);
    assert.match(run.output, /SUCCESS: \d+ rules found/);
  });

  it("pass their unit tests (promtool test rules)", () => {
    const run = promtool("test", "rules", "perps-token-rules.test.yml");
    assert.equal(run.status, 0, run.output);
    assert.match(run.output, /SUCCESS/);
  });

  it("alert on each thing on-call acts on", () => {
    assert.deepEqual(
      rules().flatMap((rule) => (rule.alert === undefined ? [] : [rule.alert])),
      [
        "PerpsTokenErrorBudgetBurn",
        "PerpsTokenLatencyBudgetBurn",
        "PerpsTokenRedisUnavailable",
        "PerpsTokenNotReady",
        "PerpsTokenDown",
        "PerpsTokenRefusalsSpiking",
        "PerpsTokenRateLimitsSpiking",
        "PerpsTokenWorkerRestarting",
      ],
    );
  });
});

describe("the rules and the dashboard name only what /metrics exports", () => {
  let redis: TestRedis;
  let service: TestService;
  let families: Map<string, Family>;

  before(async () => {
    redis = await startTestRedisServer();
    service = await startTestService({ redis: redis.topology, tokenRateLimitPerMinute: 4 });
    const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
    const grpc = createGrpcClient(TokenService, service.publicAddress);
    const connect = createClient(
      TokenService,
      createConnectTransport({ baseUrl: service.publicUrl, httpVersion: "1.1" }),
    );
    const introspection = createClient(
      TokenIntrospectionService,
      createConnectTransport({ baseUrl: service.internalUrl, httpVersion: "1.1" }),
    );
    const rest = (method: string, body: object, headers: Record<string, string> = {}) =>
      fetch(`${service.publicUrl}/user/tokens`, {
        method,
        headers: { "content-type": "application/json", ...headers },
        body: restJson(body),
      });
    try {
      const user = await newUser();
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      const created = (await (
        await rest("POST", await signedCreate(user, { name: "a" }))
      ).json()) as {
        id: string;
        token: string;
      };
      await connect.createToken(await signedCreate(user));
      await grpc.createToken(await signedCreate(user));
      await introspection.introspectToken({ token: created.token });
      await fetch(`${service.internalUrl}/auth`, {
        headers: { authorization: `Bearer ${created.token}` },
      });
      await fetch(`${service.internalUrl}/auth`);
      await rest("DELETE", await signedDelete(user, created.id));
      // Refusals: a bad signature, then the per-user rate limit (4 a minute).
      await rest("POST", { ...(await signedCreate(user)), signature: "0".repeat(128) });
      for (let i = 0; i < 2; i++) {
        await rest("POST", await signedCreate(user));
      }
      // Redis gone: a create fails on it (UNAVAILABLE) and the service is not ready.
      await redis.stop();
      await rest("POST", await signedCreate(user));
      families = exposition(await (await fetch(`${service.internalUrl}/metrics`)).text());
    } finally {
      keys.close();
      grpc.close();
    }
  });

  after(async () => {
    await service.stop();
    await redis.dispose();
  });

  it("the traffic reached every answer the rules watch", () => {
    const codes = families.get("perps_token_requests_total")?.labels.get("code");
    for (const code of ["ok", "unauthenticated", "resource_exhausted", "unavailable"]) {
      assert.ok(codes?.has(code), `no ${code} answer counted: ${[...(codes ?? [])]}`);
    }
    assert.ok(families.get("perps_token_redis_errors_total")?.labels.has("operation"));
  });

  it("every rule names exported metrics, labels and values", () => {
    const all = rules();
    const recorded = new Set(
      all.flatMap((rule) => (rule.record === undefined ? [] : [rule.record])),
    );
    const ruleLabels = new Set(all.flatMap((rule) => Object.keys(rule.labels ?? {})));
    const problems = all.flatMap((rule) =>
      problemsOf(rule.expr, families, recorded, ruleLabels).map(
        (p) => `${rule.record ?? rule.alert}: ${p}`,
      ),
    );
    assert.deepEqual(problems, []);
  });

  it("every dashboard panel names exported metrics, labels and values, or recorded rules", () => {
    const all = rules();
    const recorded = new Set(
      all.flatMap((rule) => (rule.record === undefined ? [] : [rule.record])),
    );
    const ruleLabels = new Set(all.flatMap((rule) => Object.keys(rule.labels ?? {})));
    const queries = panels().flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
    );
    assert.ok(queries.length >= 10, `only ${queries.length} queries`);
    const problems = queries.flatMap(({ panel, expr }) =>
      problemsOf(expr, families, recorded, ruleLabels).map((p) => `${panel}: ${p}`),
    );
    assert.deepEqual(problems, []);
  });

  it("the check itself catches a renamed metric, label or value", () => {
    const recorded = new Set<string>();
    const none = new Set<string>();
    assert.deepEqual(
      [
        'rate(perps_token_request_total{code="ok"}[5m])',
        'rate(perps_token_requests_total{status="ok"}[5m])',
        'rate(perps_token_requests_total{code="okay"}[5m])',
        'rate(perps_token_requests_total{method="perps.token.v1.TokenService/Create"}[5m])',
        "sum by (route) (rate(perps_token_requests_total[5m]))",
        "perps_token:nothing:rate5m",
        'rate(perps_token_request_duration_seconds_bucket{le="0.15"}[5m])',
        'rate(perps_token_requests_total{code=~"internal|internal_error"}[5m])',
        'max(nodejs_eventloop_lag_p99{job="perps-token"})',
      ].map((expr) => problemsOf(expr, families, recorded, none).length),
      [1, 1, 1, 1, 1, 1, 1, 1, 1],
    );
  });
});
