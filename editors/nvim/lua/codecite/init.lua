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
M.client = client.get
M.start = client.start
M.request_sync = client.request_sync
M.server_cmd = config.server_cmd

--- Make a file window current (the one the last question came from, if it is still there).
function M.focus_code_window()
  render.focus_code_window(commands.origin_win())
end

-- `require("codecite").last`: the last answer shown (question, answer, what each line opens),
-- read live from the commands module that keeps it.
setmetatable(M, {
  __index = function(_, key)
    if key == "last" then
      return commands.last
    end
  end,
})

---@param opts? codecite.Options
function M.setup(opts)
  config.set(opts)
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
