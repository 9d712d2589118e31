-- wrk script of bench/gateway_http.py: POST /sync bodies read from a file (hex, one per line).
-- Thread k of n sends lines k, k + n, k + 2n, ... in turn, so no two rounds of a run send the
-- same push (a repeated push would be an idempotent replay, SPEC §6.3); a file of one line is
-- sent by every connection, again and again.  A thread that runs out of lines of a longer file
-- starts again and says so at the end.
-- Arguments after `--`: the file, the number of threads.
local threads, count = {}, 0

function setup(thread)
  thread:set("tid", count)
  count = count + 1
  table.insert(threads, thread)
end

function init(args)
  local lines, nthreads = {}, tonumber(args[2])
  for line in io.lines(args[1]) do
    if line ~= "" then lines[#lines + 1] = line end
  end
  bodies, n, wrapped = {}, 0, 0
  for i, line in ipairs(lines) do
    if #lines == 1 or (i - 1) % nthreads == tid then
      bodies[#bodies + 1] = line:gsub("..", function(h) return string.char(tonumber(h, 16)) end)
    end
  end
end

function request()
  n = n + 1
  if n > #bodies then
    n = 1
    if #bodies > 1 then wrapped = 1 end
  end
  return wrk.format("POST", nil, nil, bodies[n])
end

function done(summary, latency, requests)
  local w = 0
  for _, t in ipairs(threads) do w = w + (t:get("wrapped") or 0) end
  io.write(string.format("wrapped: %d\n", w))
end
