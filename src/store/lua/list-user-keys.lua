-- The user's public keys and when each was added, in one step. Read only.
-- KEYS: 1 keys set, 2 key -> added ms hash.
-- Returns a flat list: key, added ms ("" when not known), key, ...
local out = {}
for _, key in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  out[#out + 1] = key
  out[#out + 1] = redis.call('HGET', KEYS[2], key) or ''
end
return out
