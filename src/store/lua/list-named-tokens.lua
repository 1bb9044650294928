-- The user's live named tokens, in one step: the names zset says which names
-- are live (expiry after Redis's own clock, as the create's pruning counts
-- it), the name -> id hash names their tokens. Read only.
-- KEY as token-scripts.ts declares it.
-- Returns a flat list: name, id, expires at ms, name, id, ...
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = redis.call('ZRANGEBYSCORE', KEY.names, '(' .. now, '+inf', 'WITHSCORES')
local out = {}
for i = 1, #live, 2 do
  local id = redis.call('HGET', KEY.nameIds, live[i])
  -- A name without an entry predates the hash: its id is not known.
  if id then
    out[#out + 1] = live[i]
    out[#out + 1] = id
    out[#out + 1] = live[i + 1]
  end
end
return out
