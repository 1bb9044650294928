-- Deletes a live token of the user (after signed-request.lua and
-- token-record.lua, which finds the name in the record); KEY and ARG as
-- token-scripts.ts declares them.
local refusal = refuseSignedCall(nil)
if refusal then return refusal end
local record = redis.call('GET', KEY.token)
if not record then return {NOT_FOUND, 0} end
redis.call('DEL', KEY.token)
local name = tokenRecordName(record)
if name ~= '' then
  -- The name is this token's unless the hash gives it to another id (a name
  -- that expired and was taken again within the millisecond its key still
  -- lives); a name without an entry predates the hash.
  local owner = redis.call('HGET', KEY.nameIds, name)
  if not owner or owner == ARG.tokenId then
    redis.call('ZREM', KEY.names, name)
    redis.call('HDEL', KEY.nameIds, name)
  end
end
redis.call('ZREM', KEY.live, ARG.liveMember, string.sub(record, 1, tonumber(ARG.legacyLiveMemberBytes)))
return {DONE, 0}
