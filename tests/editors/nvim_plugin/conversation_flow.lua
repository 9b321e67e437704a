-- One of three Neovim sessions on the same repository and state folder (CODECITE_NVIM_PHASE):
-- "ask" asks a question and quits; "follow_up", in a new Neovim, asks a follow-up (it must carry
-- the first question as history) then :CodeciteNew; "new", in a third Neovim, asks a question
-- that must stand alone.
local here = debug.getinfo(1, "S").source:sub(2)
local T = dofile(vim.fs.joinpath(vim.fs.dirname(here), "common.lua"))
local phase = assert(os.getenv("CODECITE_NVIM_PHASE"), "CODECITE_NVIM_PHASE not set")

T.run(function()
  -- What the plugin sends as codecite/ask, recorded on the way to the server.
  local client = require("codecite.client")
  local send = client.request
  T.report.sent = {}
  client.request = function(lsp_client, method, params, ...)
    if method == "codecite/ask" then
      table.insert(T.report.sent, vim.deepcopy(params))
    end
    return send(lsp_client, method, params, ...)
  end
  T.setup({})
  T.open_and_index("keyvault/tokens.py")
  local conversation = require("codecite.conversation")
  T.report.state_file = conversation.file(vim.fs.normalize(T.repo))
  if phase == "ask" then
    T.report.first = T.ask("CodeciteAsk What does the sign function do?")
  elseif phase == "follow_up" then
    T.report.follow_up = T.ask("CodeciteAsk Where is it called?")
    vim.cmd("CodeciteNew")
  else
    T.ask("CodeciteAsk How are tokens verified?")
  end
  T.report.state_file_exists = vim.uv.fs_stat(T.report.state_file) ~= nil
end)
