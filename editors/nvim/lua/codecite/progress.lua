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

-- An ask's partialResultToken (commands.lua): what arrives on it is a snapshot of the answer's
-- verified spans, not work-done progress, and never reaches Neovim's progress handling.
M.PARTIAL_TOKEN = "codecite-nvim-partial-"

--- partial-result token -> the listener of the question being answered
---@type table<string, fun(value: table)>
local partials = {}

--- Hear the snapshots sent on `token` until the returned function is called.
---@param token string
---@param listener fun(value: table)
---@return fun() stop
function M.listen_partial(token, listener)
  partials[token] = listener
  return function()
    partials[token] = nil
  end
end

--- The client's `$/progress` handler: a question's snapshots go to its listener (a late one is
--- dropped); every other token (indexing, an ask's stages) goes on to Neovim's own handler, so
--- LspProgress, vim.lsp.status() and progress plugins see work-done progress as before.
function M.handler(err, params, ctx, cfg)
  local token = type(params) == "table" and params.token
  if type(token) == "string" and vim.startswith(token, M.PARTIAL_TOKEN) then
    local listener = partials[token]
    if listener and type(params.value) == "table" then
      listener(params.value)
    end
    return
  end
  return vim.lsp.handlers["$/progress"](err, params, ctx, cfg)
end

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
