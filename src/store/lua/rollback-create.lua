-- Undoes a create that replicas did not confirm, so that its name, its slot
-- in the live count and its message are free for the retry.
-- KEYS: 1 token string, 2 names zset, 3 live zset, 4 replay zset, 5 name -> id hash.
-- ARGV: 1 name ("" for none), 2 live member, 3 message digest.
redis.call('DEL', KEYS[1])
if ARGV[1] ~= '' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[5], ARGV[1])
end
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[3])
return 1
