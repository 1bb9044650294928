-- Checks and bookkeeping shared by create and delete, put before either
-- script (after the status constants and rate-bucket.lua). Each script runs
-- atomically on the user's slot: every check and every write of one
-- operation happen in one step, so two concurrent requests cannot both pass
-- a check that only one may pass.
--
-- KEY and ARG: the common names come first in both scripts' declarations
-- (token-scripts.ts). The name -> id hash holds the same names as the names
-- zset, so both change together.
--
-- Every message whose signature verified is remembered, whatever the outcome
-- (refusals included), so that a captured request works at most once: only a
-- create that replicas did not confirm forgets its message again (rollback).
--
-- Digests, live members and records are raw bytes: Lua strings are binary
-- safe, and string.sub and # count bytes.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function remember()
  -- NX: a message already remembered keeps its first deadline.
  redis.call('ZADD', KEY.replay, 'NX', now + tonumber(ARG.replayWindowMs), ARG.messageDigest)
  redis.call('PEXPIRE', KEY.replay, ARG.replayWindowMs)
end
-- Expires key (and alsoKey, if given) with the last member of the zset key.
local function expireWithLast(key, alsoKey)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIREAT', key, last[2])
    if alsoKey then redis.call('PEXPIREAT', alsoKey, last[2]) end
  end
end
-- The reply refusing the call, or nil when it may go on. onReplay, if given,
-- may answer a replay instead (the create naming the token it made).
local function refuseSignedCall(onReplay)
  redis.call('ZREMRANGEBYSCORE', KEY.replay, '-inf', now)
  -- A key deleted since it verified: its message is remembered too, so that
  -- registering the same key again does not revive a captured request.
  if redis.call('SISMEMBER', KEY.publicKeys, ARG.signerPublicKey) == 0 then
    remember()
    return {KEY_REVOKED, 0}
  end
  if redis.call('ZSCORE', KEY.replay, ARG.messageDigest) then
    return (onReplay and onReplay()) or {REPLAYED, 0}
  end
  remember()
  local wait = takeRateToken(KEY.rate, tonumber(ARG.rateCapacity), tonumber(ARG.ratePeriodMs), now)
  if wait then return {RATE_LIMITED, wait} end
  return nil
end
