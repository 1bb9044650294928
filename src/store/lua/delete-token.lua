-- Deletes a live token of the user (after signed-call.lua). Extra ARGV:
-- 6 length of a token digest, 7 the token's live member (its id's raw
-- bytes), 8 token id, 9 length of a live member before ids (the digest's
-- first bytes, which a token created before then still has), 10 the byte
-- after the digest that marks record layout 1, 11 the bytes before the name
-- in layout 1 (token-record.ts).
local refusal = refuseSignedCall(nil)
if refusal then return refusal end
local record = redis.call('GET', KEYS[2])
if not record then return {NOT_FOUND, 0} end
redis.call('DEL', KEYS[2])
-- Layout 1: "<digest><marker><expiry><name>"; layout 0: "<digest><name>".
-- Names are never empty, so anything after the head is the name.
local digestLength = tonumber(ARGV[6])
local head = digestLength
if #record > digestLength and string.byte(record, digestLength + 1) == tonumber(ARGV[10]) then
  head = tonumber(ARGV[11])
end
if #record > head then
  local name = string.sub(record, head + 1)
  -- The name is this token's unless the hash gives it to another id (a name
  -- that expired and was taken again within the millisecond its key still
  -- lives); a name without an entry predates the hash.
  local owner = redis.call('HGET', KEYS[7], name)
  if not owner or owner == ARGV[8] then
    redis.call('ZREM', KEYS[3], name)
    redis.call('HDEL', KEYS[7], name)
  end
end
redis.call('ZREM', KEYS[4], ARGV[7], string.sub(record, 1, tonumber(ARGV[9])))
return {DONE, 0}
