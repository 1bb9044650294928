-- Creates a token (after signed-request.lua); KEY and ARG as token-scripts.ts
-- declares them. A session token touches neither the names zset nor the
-- name -> id hash.

-- The token id is derived from the message digest (tokenIdOf), so a live
-- KEY.token means this message created it: a replay names it, and a create
-- never overwrites it (the message's memory lost, e.g. to clock skew between
-- the service and Redis, leads here too).
local function alreadyCreated()
  if redis.call('EXISTS', KEY.token) == 1 then return {ALREADY_CREATED, 0} end
  return nil
end
local refusal = refuseSignedCall(alreadyCreated) or alreadyCreated()
if refusal then return refusal end
if ARG.named == '1' then
  -- Expired names leave the name -> id hash with the names zset.
  local expired = redis.call('ZRANGEBYSCORE', KEY.names, '-inf', now)
  for _, name in ipairs(expired) do redis.call('HDEL', KEY.nameIds, name) end
  redis.call('ZREMRANGEBYSCORE', KEY.names, '-inf', now)
  if redis.call('ZSCORE', KEY.names, ARG.name) then
    -- Taken while its token lives. A name whose token key is gone (a delete
    -- that could not read the name from a newer record layout left it) is
    -- free; one without an owner predates the name -> id hash.
    local owner = redis.call('HGET', KEY.nameIds, ARG.name)
    local prefix = string.sub(KEY.token, 1, #KEY.token - #ARG.tokenId)
    if not owner or redis.call('EXISTS', prefix .. owner) == 1 then return {NAME_TAKEN, 0} end
    redis.call('ZREM', KEY.names, ARG.name)
    redis.call('HDEL', KEY.nameIds, ARG.name)
  end
end
redis.call('ZREMRANGEBYSCORE', KEY.live, '-inf', now)
if redis.call('ZCARD', KEY.live) >= tonumber(ARG.maxActive) then
  local first = redis.call('ZRANGE', KEY.live, 0, 0, 'WITHSCORES')
  return {TOO_MANY_TOKENS, math.max(1, tonumber(first[2]) - now)}
end
if ARG.named == '1' then
  redis.call('ZADD', KEY.names, ARG.expiresAtMs, ARG.name)
  redis.call('HSET', KEY.nameIds, ARG.name, ARG.tokenId)
  expireWithLast(KEY.names, KEY.nameIds)
end
redis.call('ZADD', KEY.live, ARG.expiresAtMs, ARG.liveMember)
expireWithLast(KEY.live)
redis.call('SET', KEY.token, ARG.record, 'PXAT', ARG.expiresAtMs)
return {DONE, 0}
