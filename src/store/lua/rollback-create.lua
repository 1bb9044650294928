-- Undoes one attempt of a create that replicas did not confirm, or whose
-- reply was lost, so that its name, its slot in the live count and its
-- message are free for the retry; replies 1 if it undid the attempt, 0 if it
-- touched nothing. KEY and ARG as token-scripts.ts declares them (name "" for
-- none; record: the bytes this attempt's create would have stored).
--
-- Every attempt of one signed request writes the same keys (the token id
-- comes from the message), but its own record: each attempt draws a new
-- bearer token, whose digest the record holds. So the attempt is undone only
-- while the token's key holds its very record; then the name entry, the live
-- member and the replay mark are its own too, as a create refuses
-- (ALREADY_CREATED) while a record of the id is stored. Otherwise nothing is
-- touched:
-- - the attempt never ran, or was refused: whatever stands is another's;
-- - it was undone already (a retry of this undo whose reply was lost), or
--   the token was deleted, revoked or expired since: its message stays
--   remembered, as after any delete;
-- - a retry of the request created the token since, and may have been
--   answered 201: its record has another digest and stays, whole.
-- Nothing rewrites a stored record (only creates SET one, once), so the
-- bytes name one attempt for as long as they are stored.
if redis.call('GET', KEY.token) ~= ARG.record then return 0 end
redis.call('DEL', KEY.token)
if ARG.name ~= '' and redis.call('HGET', KEY.nameIds, ARG.name) == ARG.tokenId then
  redis.call('ZREM', KEY.names, ARG.name)
  redis.call('HDEL', KEY.nameIds, ARG.name)
end
redis.call('ZREM', KEY.live, ARG.liveMember)
redis.call('ZREM', KEY.replay, ARG.messageDigest)
return 1
