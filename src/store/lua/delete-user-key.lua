-- Removes a public key of the user (after revoke-tokens.lua) and, when it was
-- registered, revokes every live token of the user in the same step: a key
-- is usually removed because it leaked, and tokens do not record which key
-- signed their create, so any of them may be the leak's.
-- KEYS: 1 keys set, 2 key -> added ms hash, 3 names zset, 4 name -> id hash,
-- 5 live zset. ARGV: 1 public key, 2 the user's token key prefix `{tag}t`,
-- 3 bytes of a token id.
-- Returns {removed 0/1, live tokens revoked}.
if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then return {0, 0} end
redis.call('HDEL', KEYS[2], ARGV[1])
return {1, revokeUserTokens(ARGV[2], KEYS[3], KEYS[4], KEYS[5], tonumber(ARGV[3]))}
