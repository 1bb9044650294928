-- Revokes every live token of the user (after revoke-tokens.lua).
-- KEYS: 1 names zset, 2 name -> id hash, 3 live zset.
-- ARGV: 1 the user's token key prefix `{tag}t`, 2 bytes of a token id.
-- Returns how many live tokens were revoked.
return revokeUserTokens(ARGV[1], KEYS[1], KEYS[2], KEYS[3], tonumber(ARGV[2]))
