-- Revoking every live token of a user, shared by revoke-user-tokens.lua and
-- delete-user-key.lua (put before either). Runs inside one script, so no
-- token can be created or deleted halfway through.
--
-- The live zset's members are the raw 12 bytes of each token's id, so the
-- token keys are found from it (session tokens included); named tokens are
-- also found by the name -> id hash. Every key is in the user's slot: the
-- token keys are built from the user's key prefix `{tag}t`.

local BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
-- base64url without padding of a string whose length is a multiple of 3 (a
-- 12-byte token id gives its 16 characters).
local function base64url(bytes)
  local out = {}
  for i = 1, #bytes, 3 do
    local a, b, c = string.byte(bytes, i, i + 2)
    local n = a * 65536 + b * 256 + c
    for shift = 18, 0, -6 do
      local index = math.floor(n / 2 ^ shift) % 64
      out[#out + 1] = string.sub(BASE64URL, index + 1, index + 1)
    end
  end
  return table.concat(out)
end

-- Deletes every token of the user and the indexes that count and name them;
-- returns how many live tokens it deleted (an expired token's key counts
-- nothing, and a token found twice is deleted once).
local function revokeUserTokens(tokenPrefix, namesKey, nameIdsKey, liveKey, idBytes)
  local revoked = 0
  for _, member in ipairs(redis.call('ZRANGE', liveKey, 0, -1)) do
    -- Members of another length predate ids in the live zset: not a token's id.
    if #member == idBytes then
      revoked = revoked + redis.call('DEL', tokenPrefix .. base64url(member))
    end
  end
  for _, id in ipairs(redis.call('HVALS', nameIdsKey)) do
    revoked = revoked + redis.call('DEL', tokenPrefix .. id)
  end
  redis.call('DEL', namesKey, nameIdsKey, liveKey)
  return revoked
end
