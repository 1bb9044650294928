-- Creates a token (after signed-call.lua). Extra ARGV: 6 the token's
-- record (token-record.ts), 7 live member, 8 named "0"/"1", 9 name, 10 expires at ms, 11 max live
-- tokens, 12 token id. A session token touches neither the names zset nor
-- the name -> id hash.

-- The token id is derived from the message digest (tokenIdOf), so a live
-- KEYS[2] means this message created it: a replay names it, and a create
-- never overwrites it (the message's memory lost, e.g. to clock skew between
-- the service and Redis, leads here too).
local function alreadyCreated()
  if redis.call('EXISTS', KEYS[2]) == 1 then return {ALREADY_CREATED, 0} end
  return nil
end
local refusal = refuseSignedCall(alreadyCreated) or alreadyCreated()
if refusal then return refusal end
if ARGV[8] == '1' then
  -- Expired names leave the name -> id hash with the names zset.
  local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
  for _, name in ipairs(expired) do redis.call('HDEL', KEYS[7], name) end
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZSCORE', KEYS[3], ARGV[9]) then
    -- Taken while its token lives. A name whose token key is gone (a delete
    -- that could not read the name from a newer record layout left it) is
    -- free; one without an owner predates the name -> id hash.
    local owner = redis.call('HGET', KEYS[7], ARGV[9])
    local prefix = string.sub(KEYS[2], 1, #KEYS[2] - #ARGV[12])
    if not owner or redis.call('EXISTS', prefix .. owner) == 1 then return {NAME_TAKEN, 0} end
    redis.call('ZREM', KEYS[3], ARGV[9])
    redis.call('HDEL', KEYS[7], ARGV[9])
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[11]) then
  local first = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
  return {TOO_MANY_TOKENS, math.max(1, tonumber(first[2]) - now)}
end
if ARGV[8] == '1' then
  redis.call('ZADD', KEYS[3], ARGV[10], ARGV[9])
  redis.call('HSET', KEYS[7], ARGV[9], ARGV[12])
  expireWithLast(KEYS[3], KEYS[7])
end
redis.call('ZADD', KEYS[4], ARGV[10], ARGV[7])
expireWithLast(KEYS[4])
redis.call('SET', KEYS[2], ARGV[6], 'PXAT', ARGV[10])
return {DONE, 0}
