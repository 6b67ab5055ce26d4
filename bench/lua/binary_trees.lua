-- binary-trees (the Computer Language Benchmarks Game), the same algorithm as
-- workloads/binary_trees.gasm: nodes are tables {left, right}; argument N.
local function bottom_up(depth)
  if depth > 0 then
    depth = depth - 1
    return { bottom_up(depth), bottom_up(depth) }
  end
  return {}
end

local function check(node)
  local left = node[1]
  if left == nil then return 1 end
  return 1 + check(left) + check(node[2])
end

local n = tonumber(arg and arg[1]) or 10
local min_depth = 4
local max_depth = n
if max_depth < min_depth + 2 then max_depth = min_depth + 2 end

local stretch = max_depth + 1
io.write("stretch tree of depth ", stretch, "\t check: ", check(bottom_up(stretch)), "\n")

local long_lived = bottom_up(max_depth)
for depth = min_depth, max_depth, 2 do
  local iterations = 1 << (max_depth - depth + min_depth)
  local sum = 0
  for _ = 1, iterations do
    sum = sum + check(bottom_up(depth))
  end
  io.write(iterations, "\t trees of depth ", depth, "\t check: ", sum, "\n")
end
io.write("long lived tree of depth ", max_depth, "\t check: ", check(long_lived), "\n")
