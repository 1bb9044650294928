// The Lua scripts of the token store. Each runs atomically on the user's slot:
// every check and every write of one operation happen in one step, so two
// concurrent requests cannot both pass a check that only one may pass.
//
// Both return {status, retryAfterMs}. Status: 1 done, 0 business refusal
// (name taken / no such token), -1 signing key no longer registered,
// -2 replayed message, -3 rate limited, -4 too many live tokens, -5 (create
// only) this very message already created the token KEYS[2], which is live.
//
// Common KEYS: 1 keys set, 2 token string, 3 names zset, 4 live zset,
// 5 replay zset, 6 rate bucket, 7 name → id hash (the same names as the
// names zset, so both change together). Common ARGV: 1 signing key, 2 message digest
// (raw SHA-256), 3 replay window ms, 4 rate capacity, 5 rate period ms.
//
// Every message whose signature verified is remembered, whatever the outcome
// (refusals included), so that a captured request works at most once: only a
// create that replicas did not confirm forgets its message again (rollback).
//
// Digests, live members and records are raw bytes: Lua strings are binary
// safe, and string.sub and # count bytes.

/**
 * Checks and bookkeeping shared by create and delete. `onReplay` runs before
 * a replay is refused, for the create's answer naming its token.
 */
const prelude = (onReplay: string) => `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function remember()
  -- NX: a message already remembered keeps its first deadline.
  redis.call('ZADD', KEYS[5], 'NX', now + tonumber(ARGV[3]), ARGV[2])
  redis.call('PEXPIRE', KEYS[5], ARGV[3])
end
-- Expires key (and alsoKey, if given) with the last member of the zset key.
local function expireWithLast(key, alsoKey)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIREAT', key, last[2])
    if alsoKey then redis.call('PEXPIREAT', alsoKey, last[2]) end
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
-- A key deleted since it verified: its message is remembered too, so that
-- registering the same key again does not revive a captured request.
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then
  remember()
  return {-1, 0}
end
if redis.call('ZSCORE', KEYS[5], ARGV[2]) then
  ${onReplay}
  return {-2, 0}
end
remember()
local cap = tonumber(ARGV[4])
local period = tonumber(ARGV[5])
local bucket = redis.call('HMGET', KEYS[6], 't', 'ts')
local tokens = tonumber(bucket[1]) or cap
local last = tonumber(bucket[2]) or now
tokens = math.min(cap, tokens + math.max(0, now - last) * cap / period)
if tokens < 1 then return {-3, math.ceil((1 - tokens) * period / cap)} end
redis.call('HSET', KEYS[6], 't', tostring(tokens - 1), 'ts', now)
redis.call('PEXPIRE', KEYS[6], period)
`;

// The token id is derived from the message digest (tokenIdOf), so a live
// KEYS[2] means this message created it: a replay names it (-5), and a create
// never overwrites it (the message's memory lost, e.g. to clock skew between
// the service and Redis, leads here too).
const ALREADY_CREATED = "if redis.call('EXISTS', KEYS[2]) == 1 then return {-5, 0} end";

/**
 * Extra ARGV: 6 token digest, 7 live member, 8 named "0"/"1", 9 name, 10
 * expires at ms, 11 max live tokens, 12 token id. A session token touches
 * neither the names zset nor the name → id hash.
 */
export const CREATE_TOKEN_LUA = `${prelude(ALREADY_CREATED)}
${ALREADY_CREATED}
if ARGV[8] == '1' then
  -- Expired names leave the name → id hash with the names zset.
  local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
  for _, name in ipairs(expired) do redis.call('HDEL', KEYS[7], name) end
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
  redis.call('HSET', KEYS[7], ARGV[9], ARGV[12])
  expireWithLast(KEYS[3], KEYS[7])
end
redis.call('ZADD', KEYS[4], ARGV[10], ARGV[7])
expireWithLast(KEYS[4])
local record = ARGV[6]
if ARGV[8] == '1' then record = record .. ARGV[9] end
redis.call('SET', KEYS[2], record, 'PXAT', ARGV[10])
return {1, 0}
`;

/** Extra ARGV: 6 length of a token digest, 7 length of a live member (bytes), 8 token id. */
export const DELETE_TOKEN_LUA = `${prelude("")}
local record = redis.call('GET', KEYS[2])
if not record then return {0, 0} end
redis.call('DEL', KEYS[2])
-- "<digest>" or "<digest><name>": the digest has a fixed length and names are
-- never empty, so anything after it is the name.
local digestLength = tonumber(ARGV[6])
if #record > digestLength then
  local name = string.sub(record, digestLength + 1)
  -- The name is this token's unless the hash gives it to another id (a name
  -- that expired and was taken again within the millisecond its key still
  -- lives); a name without an entry predates the hash.
  local owner = redis.call('HGET', KEYS[7], name)
  if not owner or owner == ARGV[8] then
    redis.call('ZREM', KEYS[3], name)
    redis.call('HDEL', KEYS[7], name)
  end
end
redis.call('ZREM', KEYS[4], string.sub(record, 1, tonumber(ARGV[7])))
return {1, 0}
`;

// Undoes a create that replicas did not confirm, so that its name, its slot in
// the live count and its message are free for the retry.
// KEYS: 1 token string, 2 names zset, 3 live zset, 4 replay zset, 5 name → id hash.
// ARGV: 1 name ("" for none), 2 live member, 3 message digest.
export const ROLLBACK_CREATE_LUA = `
redis.call('DEL', KEYS[1])
if ARGV[1] ~= '' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[5], ARGV[1])
end
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[3])
return 1
`;

// The user's live named tokens, in one step: the names zset says which names
// are live (expiry after Redis's own clock, as the create's pruning counts
// it), the name → id hash names their tokens. Read only.
// KEYS: 1 names zset, 2 name → id hash.
// Returns a flat list: name, id, expires at ms, name, id, ...
export const LIST_NAMED_TOKENS_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
local out = {}
for i = 1, #live, 2 do
  local id = redis.call('HGET', KEYS[2], live[i])
  -- A name without an entry predates the hash: its id is not known.
  if id then
    out[#out + 1] = live[i]
    out[#out + 1] = id
    out[#out + 1] = live[i + 1]
  end
end
return out
`;

// Reads one token for a bearer check, in one round trip: its record and the
// instant it expires (ms; PEXPIRETIME, Redis 7.0), or nil for no such token.
// KEYS: 1 token string.
export const LOOKUP_TOKEN_LUA = `
local record = redis.call('GET', KEYS[1])
if not record then return false end
return {record, redis.call('PEXPIRETIME', KEYS[1])}
`;
