-- Removes a public key of the user (after revoke-tokens.lua) and, when it was
-- registered, revokes every live token of the user in the same step: a key
-- is usually removed because it leaked, and tokens do not record which key
-- signed their create, so any of them may be the leak's.
-- KEY and ARG as public-key-store.ts declares them.
-- Returns {removed 0/1, live tokens revoked}.
if redis.call('SREM', KEY.publicKeys, ARG.publicKey) == 0 then return {0, 0} end
redis.call('HDEL', KEY.publicKeysAdded, ARG.publicKey)
return {1, revokeUserTokens(ARG.tokenPrefix, KEY.names, KEY.nameIds, KEY.live, tonumber(ARG.idBytes))}
