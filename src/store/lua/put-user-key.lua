-- Adds a public key unless the user already has the most allowed; idempotent.
-- KEYS: 1 the user's keys set. ARGV: 1 public key, 2 most keys per user.
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return STORED end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return LIMIT_REACHED end
redis.call('SADD', KEYS[1], ARGV[1])
return STORED
