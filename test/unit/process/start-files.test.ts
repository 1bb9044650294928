import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ConfigError, parseConfig } from "../../../src/config/config.js";
import { readPem, readStartFiles, readTls } from "../../../src/process/start-files.js";
import { tempDirs } from "../../support/temp-dirs.js";

const line = (name: string) =>
  `${name} sha256:${createHash("sha256").update(name).digest("hex")}\n`;

describe("start files", () => {
  const temp = tempDirs("perps-start-files-");
  after(() => temp.removeAll());

  it("readPem and readTls: the files' text, or a ConfigError naming the variable and file", () => {
    const dir = temp.make();
    writeFileSync(join(dir, "cert.pem"), "CERT\n");
    writeFileSync(join(dir, "key.pem"), "KEY\n");
    assert.equal(readPem("ADMIN_CLIENT_CA_FILE", join(dir, "cert.pem")), "CERT\n");
    assert.deepEqual(readTls({ certFile: join(dir, "cert.pem"), keyFile: join(dir, "key.pem") }), {
      cert: "CERT\n",
      key: "KEY\n",
    });
    assert.throws(
      () => readTls({ certFile: join(dir, "cert.pem"), keyFile: join(dir, "none.pem") }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.message.startsWith(`TLS_KEY_FILE: cannot read ${join(dir, "none.pem")} (`),
    );
  });

  it("readStartFiles: every file the configuration names, none it does not", () => {
    const dir = temp.make();
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text, { mode: 0o600 });
      return join(dir, name);
    };
    const config = parseConfig({
      ADMIN_CREDENTIALS_FILE: file("admins", line("alice")),
      SERVICE_CREDENTIALS_FILE: file("services", line("edge") + line("billing")),
      TLS_CERT_FILE: file("cert.pem", "CERT\n"),
      TLS_KEY_FILE: file("key.pem", "KEY\n"),
      ADMIN_CLIENT_CA_FILE: file("ca.pem", "CA\n"),
      CONSOLE: "off",
    });
    const files = readStartFiles(config);
    assert.deepEqual(
      files.adminCredentials?.entries.map((e) => e.name),
      ["alice"],
    );
    assert.equal(files.adminCredentials?.variable, "ADMIN_CREDENTIALS_FILE");
    assert.deepEqual(
      files.serviceCredentials?.entries.map((e) => e.name),
      ["edge", "billing"],
    );
    assert.deepEqual(files.tls, { cert: "CERT\n", key: "KEY\n" });
    assert.equal(files.adminClientCa, "CA\n");
    assert.equal(files.console, undefined);

    assert.deepEqual(readStartFiles(parseConfig({ CONSOLE: "off" })), {
      adminCredentials: undefined,
      serviceCredentials: undefined,
      tls: undefined,
      adminClientCa: undefined,
      console: undefined,
    });
  });

  it("readStartFiles: the first file that cannot be read throws its ConfigError", () => {
    const config = parseConfig({
      SERVICE_CREDENTIALS_FILE: join(temp.make(), "missing"),
      CONSOLE: "off",
    });
    assert.throws(
      () => readStartFiles(config),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.message.startsWith("SERVICE_CREDENTIALS_FILE: cannot read"),
    );
  });
});
