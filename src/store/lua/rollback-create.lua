-- Undoes a create that replicas did not confirm, or whose reply was lost, so
-- that its name, its slot in the live count and its message are free for the
-- retry. It may run where the create was refused or never ran: the name is
-- freed only while this token holds it.
-- KEY and ARG as token-scripts.ts declares them (name "" for none).
redis.call('DEL', KEY.token)
if ARG.name ~= '' and redis.call('HGET', KEY.nameIds, ARG.name) == ARG.tokenId then
  redis.call('ZREM', KEY.names, ARG.name)
  redis.call('HDEL', KEY.nameIds, ARG.name)
end
redis.call('ZREM', KEY.live, ARG.liveMember)
redis.call('ZREM', KEY.replay, ARG.messageDigest)
return 1
