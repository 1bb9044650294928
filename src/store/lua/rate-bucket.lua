-- A per-user token bucket, put before the scripts that take from one: holds
-- up to `cap` calls and refills `cap` per `period` ms. Takes one call from
-- the HASH `key` (t: calls left, ts: last refill) and returns nil, or, when
-- the bucket is empty, the ms until it holds a call again (nothing taken).
local function takeRateToken(key, cap, period, now)
  local bucket = redis.call('HMGET', key, 't', 'ts')
  local tokens = tonumber(bucket[1]) or cap
  local last = tonumber(bucket[2]) or now
  tokens = math.min(cap, tokens + math.max(0, now - last) * cap / period)
  if tokens < 1 then return math.ceil((1 - tokens) * period / cap) end
  redis.call('HSET', key, 't', tostring(tokens - 1), 'ts', now)
  redis.call('PEXPIRE', key, period)
  return nil
end
