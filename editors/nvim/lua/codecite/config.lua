-- Options: the defaults, what setup() was given, and the server command they imply.
local M = {}

---@class codecite.Options
---@field cmd? string[] server command; default `codecite serve`, else `python3 -m codecite_lsp serve`
---@field root_markers? string[] files/folders marking a repository root
---@field settings? table codecite settings (model, embedding, index_dir, ...) sent to the server
---@field filetypes? string[] attach only to these filetypes; nil attaches to every file
---@field autostart? boolean start the server when a file is opened (default true)
---@field on_attach? fun(client: vim.lsp.Client, bufnr: integer)
---@field debug? boolean show each answer's trace id (its record in the index folder's trace.jsonl)

---@type codecite.Options
M.defaults = {
  cmd = nil,
  root_markers = { ".codecite.toml", ".git" },
  settings = {},
  filetypes = nil,
  autostart = true,
  on_attach = nil,
  debug = false,
}

---@type codecite.Options
M.options = vim.deepcopy(M.defaults)
M.configured = false -- setup() called; health reports it

---@param opts? codecite.Options
function M.set(opts)
  -- Shallow on purpose: a list given by the user (cmd, root_markers) replaces the default whole.
  M.options = vim.tbl_extend("force", vim.deepcopy(M.defaults), opts or {})
  M.configured = true
end

---@return string[]
function M.server_cmd()
  if M.options.cmd then
    return M.options.cmd
  end
  if vim.fn.executable("codecite") == 1 then
    return { "codecite", "serve" }
  end
  return { "python3", "-m", "codecite_lsp", "serve" }
end

return M
