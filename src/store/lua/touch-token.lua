-- Records a token's last use (last-use-recorder.ts batches them): only while
-- the token's key lives, expiring with it, and never back in time (another
-- worker may have written a later minute). KEY and ARG as token-scripts.ts
-- declares them. Returns 1 when written, else 0.
local expiresAt = redis.call('PEXPIRETIME', KEY.token)
if expiresAt <= 0 then return 0 end
local written = tonumber(redis.call('GET', KEY.lastUse) or '0') or 0
if written >= tonumber(ARG.usedAtMs) then return 0 end
redis.call('SET', KEY.lastUse, ARG.usedAtMs, 'PXAT', expiresAt)
return 1
