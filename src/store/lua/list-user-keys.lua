-- The user's public keys and when each was added, in one step. Read only.
-- KEY as public-key-store.ts declares it.
-- Returns a flat list: key, added ms ("" when not known), key, ...
local out = {}
for _, key in ipairs(redis.call('SMEMBERS', KEY.publicKeys)) do
  out[#out + 1] = key
  out[#out + 1] = redis.call('HGET', KEY.publicKeysAdded, key) or ''
end
return out
