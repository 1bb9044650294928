-- Revokes every live token of the user (after revoke-tokens.lua).
-- KEY and ARG as token-scripts.ts declares them.
-- Returns how many live tokens were revoked.
return revokeUserTokens(ARG.tokenPrefix, KEY.names, KEY.nameIds, KEY.live, tonumber(ARG.idBytes))
