// The Lua scripts of the token store. Each runs atomically on the user's slot:
// every check and every write of one operation happen in one step, so two
// concurrent requests cannot both pass a check that only one may pass.
//
// Both return {status, retryAfterMs}. Status: 1 done, 0 business refusal
// (name taken / no such token), -1 signing key no longer registered,
// -2 replayed message, -3 rate limited, -4 too many live tokens.
//
// Common KEYS: 1 keys set, 2 token string, 3 names zset, 4 live zset,
// 5 replay zset, 6 rate bucket. Common ARGV: 1 signing key, 2 message digest
// (raw SHA-256), 3 replay window ms, 4 rate capacity, 5 rate period ms.
//
// Digests, live members and records are raw bytes: Lua strings are binary
// safe, and string.sub and # count bytes.

const PRELUDE = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then return {-1, 0} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
if redis.call('ZSCORE', KEYS[5], ARGV[2]) then return {-2, 0} end
local cap = tonumber(ARGV[4])
local period = tonumber(ARGV[5])
local bucket = redis.call('HMGET', KEYS[6], 't', 'ts')
local tokens = tonumber(bucket[1]) or cap
local last = tonumber(bucket[2]) or now
tokens = math.min(cap, tokens + math.max(0, now - last) * cap / period)
if tokens < 1 then return {-3, math.ceil((1 - tokens) * period / cap)} end
redis.call('HSET', KEYS[6], 't', tostring(tokens - 1), 'ts', now)
redis.call('PEXPIRE', KEYS[6], period)
local function remember()
  redis.call('ZADD', KEYS[5], now + tonumber(ARGV[3]), ARGV[2])
  redis.call('PEXPIRE', KEYS[5], ARGV[3])
end
local function expireWithLast(key)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIREAT', key, last[2]) end
end
`;

/** Extra ARGV: 6 token digest, 7 live member, 8 named "0"/"1", 9 name, 10 expires at ms, 11 max live tokens. */
export const CREATE_TOKEN_LUA = `${PRELUDE}
if ARGV[8] == '1' then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZSCORE', KEYS[3], ARGV[9]) then return {0, 0} end
end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[11]) then
  local first = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
  return {-4, math.max(1, tonumber(first[2]) - now)}
end
if ARGV[8] == '1' then
  redis.call('ZADD', KEYS[3], ARGV[10], ARGV[9])
  expireWithLast(KEYS[3])
end
redis.call('ZADD', KEYS[4], ARGV[10], ARGV[7])
expireWithLast(KEYS[4])
local record = ARGV[6]
if ARGV[8] == '1' then record = record .. ARGV[9] end
redis.call('SET', KEYS[2], record, 'PXAT', ARGV[10])
remember()
return {1, 0}
`;

/** Extra ARGV: 6 length of a token digest, 7 length of a live member (bytes). */
export const DELETE_TOKEN_LUA = `${PRELUDE}
local record = redis.call('GET', KEYS[2])
if not record then return {0, 0} end
redis.call('DEL', KEYS[2])
-- "<digest>" or "<digest><name>": the digest has a fixed length and names are
-- never empty, so anything after it is the name.
local digestLength = tonumber(ARGV[6])
if #record > digestLength then redis.call('ZREM', KEYS[3], string.sub(record, digestLength + 1)) end
redis.call('ZREM', KEYS[4], string.sub(record, 1, tonumber(ARGV[7])))
remember()
return {1, 0}
`;

// Undoes a create that replicas did not confirm, so that its name, its slot in
// the live count and its message are free for the retry.
// KEYS: 1 token string, 2 names zset, 3 live zset, 4 replay zset.
// ARGV: 1 name ("" for none), 2 live member, 3 message digest.
export const ROLLBACK_CREATE_LUA = `
redis.call('DEL', KEYS[1])
if ARGV[1] ~= '' then redis.call('ZREM', KEYS[2], ARGV[1]) end
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[3])
return 1
`;
