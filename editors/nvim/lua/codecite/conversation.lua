-- The conversation a follow-up continues, one per repository root, kept in a file under
-- stdpath('state') so that closing and reopening Neovim does not lose it; :CodeciteNew clears it.
-- Each turn is {question, answer} with the answer as codecite/ask returned it: the server verifies
-- its citations afresh on every question, so nothing stored is ever shown as verified.
local M = {}

--- The server reads at most 50 turns of history (docs/contracts.md); older ones are dropped.
M.TURNS_KEPT = 50

---@type table<string, {question: string, answer: codecite.Answer}[]>
local loaded = {}

---@return string the folder holding one file per root
function M.dir()
  return vim.fs.joinpath(vim.fn.stdpath("state"), "codecite", "conversations")
end

---@param root string
---@return string
function M.file(root)
  return vim.fs.joinpath(M.dir(), vim.fn.sha256(root) .. ".json")
end

local function is_turn(turn)
  if type(turn) ~= "table" or type(turn.question) ~= "string" or type(turn.answer) ~= "table" then
    return false
  end
  local status = turn.answer.status
  return status == "refused" or (status == "answered" and type(turn.answer.spans) == "table")
end

--- The stored turns of `root`; a missing, unreadable or malformed file is an empty conversation
--- (it is replaced on the next answer), never an error in the user's way.
local function read(root)
  local ok, lines = pcall(vim.fn.readfile, M.file(root))
  if not ok or #lines == 0 then
    return {}
  end
  -- Decoded as the LSP client decodes the answers it receives (null -> nil).
  local luanil = { luanil = { object = true, array = true } }
  local decoded_ok, data = pcall(vim.json.decode, table.concat(lines, "\n"), luanil)
  if not decoded_ok or type(data) ~= "table" or data.root ~= root then
    return {}
  end
  if type(data.turns) ~= "table" then
    return {}
  end
  return vim.tbl_filter(is_turn, data.turns)
end

local function write(root, turns)
  local path = M.file(root)
  if #turns == 0 then
    os.remove(path)
    return
  end
  vim.fn.mkdir(M.dir(), "p")
  -- Written beside, then renamed: a Neovim killed mid-write leaves the previous conversation.
  local partial = path .. ".partial"
  local ok = pcall(vim.fn.writefile, { vim.json.encode({ root = root, turns = turns }) }, partial)
  if not ok or not os.rename(partial, path) then
    os.remove(partial)
    vim.notify("codecite: could not save the conversation in " .. M.dir(), vim.log.levels.WARN)
  end
end

--- The turns of `root`'s conversation, oldest first (read from disk once per session).
---@param root string
---@return {question: string, answer: codecite.Answer}[]
function M.turns(root)
  loaded[root] = loaded[root] or read(root)
  return loaded[root]
end

---@param root string
---@param turn {question: string, answer: codecite.Answer}
function M.add(root, turn)
  local turns = M.turns(root)
  table.insert(turns, turn)
  while #turns > M.TURNS_KEPT do
    table.remove(turns, 1)
  end
  write(root, turns)
end

---@param root string
function M.clear(root)
  loaded[root] = {}
  write(root, {})
end

return M
