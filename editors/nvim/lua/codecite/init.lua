-- codecite.nvim: Neovim client for codecite-lsp (answers about a repository, with verified
-- citations). Protocol: docs/contracts.md of the codecite-lsp repository.
-- The user commands exist before setup() (plugin/codecite.lua); setup() configures the server and
-- starts it for opened files. The modules: config (options), client (the LSP client), commands
-- (what the commands do), render (the answer buffer and status lines), health (:checkhealth).
local client = require("codecite.client")
local commands = require("codecite.commands")
local config = require("codecite.config")
local render = require("codecite.render")

local M = {}

M.NAME = client.NAME
M.ask = commands.ask
M.cancel = commands.cancel
M.new_conversation = commands.new_conversation
M.client = client.get
M.start = client.start
M.request_sync = client.request_sync
M.server_cmd = config.server_cmd

--- For the statusline: what a running index pass says ("codecite: indexing 48%: …"), else "".
--- `vim.o.statusline = "%f %m%=%{v:lua.require'codecite'.status()} %l:%c"`
function M.status()
  return require("codecite.progress").status()
end

--- Make a file window current (the one the last question came from, if it is still there).
function M.focus_code_window()
  render.focus_code_window(commands.origin_win())
end

-- `require("codecite").last`: the last answer shown (question, answer, what each line opens),
-- read live from the commands module that keeps it.
setmetatable(M, {
  __index = function(_, key)
    if key == "last" or key == "conversation" then -- conversation: what a follow-up continues
      return commands[key]
    end
  end,
})

---@param opts? codecite.Options
function M.setup(opts)
  config.set(opts)
  require("codecite.progress") -- starts listening to the server's progress
  -- A second setup() with new settings reaches servers that are already running.
  for _, running in ipairs(vim.lsp.get_clients({ name = client.NAME })) do
    running.settings = { codecite = config.options.settings }
    client.notify_server(
      running,
      "workspace/didChangeConfiguration",
      { settings = running.settings }
    )
  end
  if config.options.autostart then
    client.enable_autostart()
  else
    client.disable_autostart()
  end
end

return M
