import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A self-signed P-256 certificate for 127.0.0.1 and localhost, valid one day,
 * made by openssl in `dir` (cert.pem, key.pem): the certificate is its own CA.
 */
export async function selfSignedCert(dir: string): Promise<{ cert: string; key: string }> {
  const keyFile = join(dir, "key.pem");
  const certFile = join(dir, "cert.pem");
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    keyFile,
    "-out",
    certFile,
    "-days",
    "1",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=IP:127.0.0.1,DNS:localhost",
  ]);
  return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };
}
