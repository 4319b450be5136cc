-- Marks fingerprints seen without queueing them. ARGV: prefix, then pairs of
-- (seen bucket, fingerprint field). Returns how many were new.
do
  local garbled = garbled_counter()
  if garbled then
    return redis.error_reply(garbled)
  end
end
local new = 0
for i = 2, #ARGV, 2 do
  new = new + redis.call('HSETNX', P .. 'seen:' .. ARGV[i], ARGV[i + 1], '')
end
if new > 0 then
  redis.call('HINCRBY', COUNT, 'seen', new)
end
return new
