-- Reads one token for a bearer check, in one round trip: its record and the
-- instant it expires (ms; PEXPIRETIME, Redis 7.0), or nil for no such token.
-- KEYS: 1 token string.
local record = redis.call('GET', KEYS[1])
if not record then return false end
return {record, redis.call('PEXPIRETIME', KEYS[1])}
