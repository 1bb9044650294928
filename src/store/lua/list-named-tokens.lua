-- One page of the user's live named tokens, cut here so that a page costs
-- O(log n + page), whatever the user holds. Takes a call from the user's
-- list rate bucket first (rate-bucket.lua). Read only otherwise.
--
-- The order is the names zset's own: expiry (its score, fixed for a token's
-- life), then name in byte order. A page resumes strictly after the last
-- (expiry, name) the previous page scanned, so a token live throughout is
-- listed exactly once however many are created or deleted between pages.
-- Names expired by Redis's clock (score <= now, as the create's pruning
-- counts them) are skipped; the name -> id hash names each token, and its
-- record is returned as stored (token-record.ts decodes it), so a field added
-- to the record is listed without a change here.
-- KEY and ARG as token-scripts.ts declares them.
-- Returns {RATE_LIMITED, retryAfterMs}, or {DONE, 0, more, lastExpiresAtMs,
-- lastName, name, id, expires at ms, record, last use, name, ...}; `more` is
-- 1 when a token follows the page, and the last pair is where the next page
-- resumes. The last use is its key's value (Unix ms), '' before the first.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wait = takeRateToken(KEY.listRate, tonumber(ARG.rateCapacity), tonumber(ARG.ratePeriodMs), now)
if wait then return {RATE_LIMITED, wait} end

-- a > b in byte order (Lua's own < follows the server's locale).
local function bytesAfter(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

local size = tonumber(ARG.pageSize)
-- The first live rank: every member scored <= now has expired.
local start = redis.call('ZCOUNT', KEY.names, '-inf', now)
if ARG.afterExpiresAtMs ~= '' then
  -- Ranks lo .. hi-1 share the cursor's expiry, ordered by name: a binary
  -- search finds the first named after the cursor's name.
  local lo = redis.call('ZCOUNT', KEY.names, '-inf', '(' .. ARG.afterExpiresAtMs)
  local hi = redis.call('ZCOUNT', KEY.names, '-inf', ARG.afterExpiresAtMs)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if bytesAfter(redis.call('ZRANGE', KEY.names, mid, mid)[1], ARG.afterName) then
      hi = mid
    else
      lo = mid + 1
    end
  end
  if lo > start then start = lo end
end

-- One more than the page, to tell whether another page follows.
local range = redis.call('ZRANGE', KEY.names, start, start + size, 'WITHSCORES')
local scanned = math.min(#range / 2, size)
local out = {DONE, 0, 0, '', ''}
for i = 1, scanned do
  local name = range[2 * i - 1]
  local id = redis.call('HGET', KEY.nameIds, name)
  -- A name without an entry predates the hash: its id is not known. A token
  -- key already gone (expired by Redis' clock within this millisecond) is
  -- not listed either.
  local record = id and redis.call('GET', ARG.tokenPrefix .. id)
  if record then
    out[#out + 1] = name
    out[#out + 1] = id
    out[#out + 1] = range[2 * i]
    out[#out + 1] = record
    out[#out + 1] = redis.call('GET', ARG.lastUsePrefix .. id) or ''
  end
end
if #range / 2 > size then
  out[3] = 1
  out[4] = range[2 * size]
  out[5] = range[2 * size - 1]
end
return out
