-- Adds a public key unless the user already has the most allowed; idempotent.
-- A new key's registration time (Redis' clock, ms) goes in the added hash; a
-- key already there keeps its first date.
-- KEY and ARG as public-key-store.ts declares them.
if redis.call('SISMEMBER', KEY.publicKeys, ARG.publicKey) == 1 then return STORED end
if redis.call('SCARD', KEY.publicKeys) >= tonumber(ARG.maxKeys) then return LIMIT_REACHED end
redis.call('SADD', KEY.publicKeys, ARG.publicKey)
local t = redis.call('TIME')
redis.call('HSET', KEY.publicKeysAdded, ARG.publicKey, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
return STORED
