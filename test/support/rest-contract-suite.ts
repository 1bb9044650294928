import {
  type CreateOptions,
  createFields,
  DEFAULT_EXPIRES_IN,
  type Fields,
  jsonText,
  MAX_LIFETIME,
  openApi,
  PATH,
} from "./rest-contract-bodies.js";
import { assertCreated, type Created, type RestResponse } from "./rest-contract-checks.js";
import type { TestUser } from "./signing.js";
import { tokenClientsSuite } from "./token-clients-suite.js";

/**
 * The service of a REST contract suite and the REST calls its tests make;
 * call it inside the suite's describe.
 */
export function restContractSuite() {
  const { redis, service, grpcKeys, grpcTokens, registeredUser } = tokenClientsSuite({
    tokenMaxLifetimeSeconds: MAX_LIFETIME,
  });

  /**
   * A request to the public listener; contentType null sends none. The
   * response is checked against the OpenAPI document.
   */
  async function rest(
    method: string,
    body: string | Uint8Array | undefined,
    opts: { path?: string; contentType?: string | null; authorization?: string } = {},
  ): Promise<RestResponse> {
    const contentType = opts.contentType === undefined ? "application/json" : opts.contentType;
    const path = opts.path ?? PATH;
    const res = await fetch(`${service.publicUrl}${path}`, {
      method,
      headers: {
        ...(contentType === null ? {} : { "content-type": contentType }),
        ...(opts.authorization === undefined ? {} : { authorization: opts.authorization }),
      },
      ...(body === undefined ? {} : { body }),
    });
    const received = { status: res.status, headers: res.headers, text: await res.text() };
    openApi.check({ method, path, ...received });
    return received;
  }

  const post = (fields: Fields) => rest("POST", jsonText(fields));
  const list = (authorization: string | undefined) =>
    rest("GET", undefined, {
      contentType: null,
      ...(authorization === undefined ? {} : { authorization }),
    });
  const del = (fields: Fields) => rest("DELETE", jsonText(fields));

  /** Creates a token over REST and checks the 201 answer. */
  async function created(user: TestUser, opts: CreateOptions = {}): Promise<Created> {
    const fields = await createFields(user, opts);
    const sentAt = Date.now();
    const res = await post(fields);
    return assertCreated(res, opts.expiresIn ?? DEFAULT_EXPIRES_IN, sentAt, Date.now());
  }
  return { redis, service, grpcKeys, grpcTokens, registeredUser, rest, post, list, del, created };
}
