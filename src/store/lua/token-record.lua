-- Reading a token's record (token-record.ts declares its layouts and hands
-- their numbers over as the RECORD_* constants), put before the scripts that
-- need a token's name. Layout 2 is "<digest><marker><TokenRecord message>":
-- the name is found by its field number and every other field is skipped by
-- its wire type, so a field added to TokenRecord changes nothing here.

-- The varint at byte i of s: its value and the index after it, or nil when s
-- ends inside it. Exact below 2^53, enough for lengths and tags.
local function recordVarint(s, i)
  local value, scale = 0, 1
  for j = i, math.min(#s, i + 9) do
    local b = string.byte(s, j)
    value = value + (b % 128) * scale
    if b < 128 then return value, j + 1 end
    scale = scale * 128
  end
  return nil, nil
end

-- The name stored in a token's record, any layout ('' for a session token,
-- or for a record that is not well formed).
local function tokenRecordName(record)
  if #record <= RECORD_DIGEST_BYTES then return '' end
  local layout = string.byte(record, RECORD_DIGEST_BYTES + 1)
  if layout == RECORD_LAYOUT1_MARKER then return string.sub(record, RECORD_LAYOUT1_HEAD_BYTES + 1) end
  if layout ~= RECORD_MARKER then return string.sub(record, RECORD_DIGEST_BYTES + 1) end
  local i = RECORD_DIGEST_BYTES + 2
  while i <= #record do
    local tag, length
    tag, i = recordVarint(record, i)
    if not tag then return '' end
    local wire = tag % 8
    if wire == 0 then
      length, i = recordVarint(record, i)
      if not length then return '' end
    elseif wire == 1 then
      i = i + 8
    elseif wire == 5 then
      i = i + 4
    elseif wire == 2 then
      length, i = recordVarint(record, i)
      if not length then return '' end
      if (tag - wire) / 8 == RECORD_NAME_FIELD then return string.sub(record, i, i + length - 1) end
      i = i + length
    else
      return ''
    end
  end
  return ''
end
