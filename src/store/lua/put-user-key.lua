-- Adds a public key unless the user already has the most allowed; idempotent.
-- A new key's registration time (Redis' clock, ms) goes in the added hash; a
-- key already there keeps its first date.
-- KEYS: 1 the user's keys set, 2 key -> added ms hash.
-- ARGV: 1 public key, 2 most keys per user.
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return STORED end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return LIMIT_REACHED end
redis.call('SADD', KEYS[1], ARGV[1])
local t = redis.call('TIME')
redis.call('HSET', KEYS[2], ARGV[1], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
return STORED
