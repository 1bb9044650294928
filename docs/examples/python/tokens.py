"""A Python caller of the perps token service: REST for tokens, gRPC for the rest.

Needs `cryptography` and `grpcio` (Debian: python3-cryptography, python3-grpcio)
and the stubs generated from proto/ on PYTHONPATH (see docs/other-languages.md).
Registers a fresh key for a new user on the internal listener, creates a named
and a session token, lists, introspects, deletes, and removes the key again.
"""

import json
import os
import time
import urllib.error
import urllib.request
import uuid
from urllib.parse import urlparse

import grpc
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from perps.token.v1 import token_introspection_pb2, token_introspection_pb2_grpc
from perps.token.v1 import user_key_pb2, user_key_pb2_grpc

API = os.environ.get("API", "http://127.0.0.1:8080")
INTERNAL = os.environ.get("INTERNAL", "http://127.0.0.1:9090")
# The key registry is for operators: their secret (by default the one the service's first start
# wrote in .data/redis/operator-secret), sent as gRPC metadata.
OPERATOR = [("authorization", f"Bearer {os.environ['OPERATOR_SECRET']}")]


def now_ms() -> int:
    # Whole milliseconds: the signed text carries plain decimal integers
    # ("1700000000000", never "1.7e12" or "1700000000000.0").
    return time.time_ns() // 1_000_000


def sign(key: Ed25519PrivateKey, message: str) -> str:
    return key.sign(message.encode("utf-8")).hex()


def rest(method: str, path: str, body: dict | None = None, token: str | None = None) -> dict:
    headers = {"content-type": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(API + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request) as response:
            return json.load(response)
    except urllib.error.HTTPError as refused:
        # The service's error body: {"code": <gRPC code>, "message": ..., "details": [...]}
        error = json.load(refused)
        raise RuntimeError(f"HTTP {refused.code}: {error['message']}") from None


def create_token(
    key,
    user_id: str,
    expires_in: int | None = None,
    name: str | None = None,
    scopes: list[str] | None = None,
    allowed_ips: list[str] | None = None,
) -> dict:
    ts = now_ms()
    # Omitted fields leave their slot empty; the colons stay.
    slot_expires = "" if expires_in is None else str(expires_in)
    slot_name = "" if name is None else name
    message = f"createToken:{ts}:{slot_expires}:{slot_name}:{user_id}"
    if scopes or allowed_ips:
        # With either list, both are appended, each joined by "," in the order sent.
        message += f":{','.join(scopes or [])}:{','.join(allowed_ips or [])}"
    body = {"signature": sign(key, message), "timestamp": ts, "userId": user_id}
    if expires_in is not None:
        body["expiresIn"] = expires_in
    if name is not None:
        body["name"] = name
    if scopes:
        body["scopes"] = scopes
    if allowed_ips:
        body["allowedIps"] = allowed_ips
    return rest("POST", "/user/tokens", body)


def delete_token(key, user_id: str, token_id: str) -> dict:
    ts = now_ms()
    body = {
        "signature": sign(key, f"deleteToken:{ts}:{token_id}:{user_id}"),
        "timestamp": ts,
        "tokenId": token_id,
        "userId": user_id,
    }
    return rest("DELETE", "/user/tokens", body)


def main() -> None:
    user_id = str(uuid.uuid4())
    key = Ed25519PrivateKey.generate()
    public_key = key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    ).hex()

    # The internal listener speaks gRPC without TLS (h2c).
    with grpc.insecure_channel(urlparse(INTERNAL).netloc) as channel:
        keys = user_key_pb2_grpc.UserKeyServiceStub(channel)
        introspection = token_introspection_pb2_grpc.TokenIntrospectionServiceStub(channel)
        keys.PutUserKey(
            user_key_pb2.PutUserKeyRequest(user_id=user_id, public_key=public_key),
            metadata=OPERATOR,
        )

        # A bot's token: it may read and trade, from its server's address only.
        named = create_token(
            key,
            user_id,
            expires_in=3600,
            name="py-bot",
            scopes=["read", "trade"],
            allowed_ips=["203.0.113.7"],
        )
        print(f"named token {named['id']} expires {named['expiresAt']}")
        session = create_token(key, user_id)
        print(f"session token {session['id']} expires {session['expiresAt']}")

        listed = rest("GET", "/user/tokens", token=session["token"])
        print("listed:", [(t["id"], t["name"]) for t in listed["tokens"]])

        # A platform service passes the caller's address; the token is live only from its list.
        answer = introspection.IntrospectToken(
            token_introspection_pb2.IntrospectTokenRequest(
                token=named["token"], client_ip="203.0.113.7"
            )
        )
        print(
            f"introspect: active={answer.active} name={answer.name} token_id={answer.token_id}"
            f" scopes={','.join(answer.scopes)}"
        )
        answer = introspection.IntrospectToken(
            token_introspection_pb2.IntrospectTokenRequest(
                token=named["token"], client_ip="198.51.100.1"
            )
        )
        print(f"introspect from another address: active={answer.active}")

        delete_token(key, user_id, named["id"])
        print(f"deleted {named['id']}")
        answer = introspection.IntrospectToken(
            token_introspection_pb2.IntrospectTokenRequest(
                token=named["token"], client_ip="203.0.113.7"
            )
        )
        print(f"introspect after delete: active={answer.active}")

        # Removing the key also revokes the user's live tokens (the session token here).
        removed = keys.DeleteUserKey(
            user_key_pb2.DeleteUserKeyRequest(user_id=user_id, public_key=public_key),
            metadata=OPERATOR,
        )
        print(f"key removed, revoked tokens: {removed.revoked_tokens}")


if __name__ == "__main__":
    main()
