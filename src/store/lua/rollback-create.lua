-- Undoes a create that replicas did not confirm, so that its name, its slot
-- in the live count and its message are free for the retry.
-- KEY and ARG as token-scripts.ts declares them (name "" for none).
redis.call('DEL', KEY.token)
if ARG.name ~= '' then
  redis.call('ZREM', KEY.names, ARG.name)
  redis.call('HDEL', KEY.nameIds, ARG.name)
end
redis.call('ZREM', KEY.live, ARG.liveMember)
redis.call('ZREM', KEY.replay, ARG.messageDigest)
return 1
