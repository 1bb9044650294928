-- Reads one token for a bearer check, in one round trip: its record and the
-- instant it expires (ms; PEXPIRETIME, Redis 7.0), or nil for no such token.
-- KEY as token-scripts.ts declares it.
local record = redis.call('GET', KEY.token)
if not record then return false end
return {record, redis.call('PEXPIRETIME', KEY.token)}
