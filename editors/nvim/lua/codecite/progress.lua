-- Indexing progress for the statusline, without a progress plugin: the server's $/progress
-- (LspProgress) kept per client, since vim.lsp.status() hands each message out only once.
-- `require("codecite").status()` reads it; the statusline is redrawn on every report.
local M = {}

--- client id -> what its running index pass last said ("indexing 48%: keyvault/keys.py")
---@type table<integer, string>
M.running = {}

local ASK_TOKEN = "^codecite%-nvim%-ask%-" -- a question's own stages are shown in its buffer

local function said(value)
  local text = value.title or "codecite"
  if value.percentage then
    text = ("%s %d%%"):format(text, value.percentage)
  end
  if value.message and value.message ~= "" then
    text = text .. ": " .. value.message
  end
  return text
end

local titles = {} -- client id -> token -> the begin's title (reports carry none)

vim.api.nvim_create_autocmd("LspProgress", {
  group = vim.api.nvim_create_augroup("codecite_progress", { clear = true }),
  callback = function(event)
    local client = vim.lsp.get_client_by_id(event.data.client_id)
    local params = event.data.params or {}
    local value = params.value or {}
    if not client or client.name ~= "codecite" or tostring(params.token):find(ASK_TOKEN) then
      return
    end
    local id, token = client.id, tostring(params.token)
    titles[id] = titles[id] or {}
    if value.kind == "end" then
      titles[id][token] = nil
      M.running[id] = nil
    else
      titles[id][token] = value.title or titles[id][token]
      M.running[id] = said(vim.tbl_extend("force", value, { title = titles[id][token] }))
    end
    vim.cmd.redrawstatus()
  end,
})

--- The statusline text: what a running index pass says, "" when none runs.
---@return string
function M.status()
  local parts = {}
  for id, text in pairs(M.running) do
    if vim.lsp.get_client_by_id(id) then
      table.insert(parts, text)
    end
  end
  table.sort(parts)
  return table.concat(parts, " · ")
end

return M
