-- Dedup-and-enqueue. ARGV: prefix, max_in_flight (not needed here), then groups of
-- (seen bucket, fingerprint field, host, entry). Returns how many were new.
do
  local garbled = garbled_counter()
  if garbled then
    return redis.error_reply(garbled)
  end
end
local new, touched = 0, {}
for i = 3, #ARGV, 4 do
  if redis.call('HSETNX', P .. 'seen:' .. ARGV[i], ARGV[i + 1], '') == 1 then
    redis.call('RPUSH', P .. 'q:' .. ARGV[i + 2], ARGV[i + 3])
    touched[ARGV[i + 2]] = true
    new = new + 1
  end
end
if new > 0 then
  redis.call('HINCRBY', COUNT, 'seen', new)
  redis.call('HINCRBY', COUNT, 'queued', new)
  local now = now_ms()
  for host in pairs(touched) do
    schedule(host, now)
  end
end
return new
