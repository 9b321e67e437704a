-- Follow-ups, stages and cancel with a slow model (mocked through litellm, CODECITE_MOCK_DELAY):
-- the second question carries the first as history, the answer buffer shows the server's stage
-- while waiting, :CodeciteCancel stops a question and says so, :CodeciteNew forgets the chat.
local here = debug.getinfo(1, "S").source:sub(2)
local T = dofile(vim.fs.joinpath(vim.fs.dirname(here), "common.lua"))

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
  local stages = {}
  T.report.stages = stages
  local function watch_stages()
    local line = T.lines(T.answer_buf())[3]
    if line and line:find("…$") and stages[#stages] ~= line then
      table.insert(stages, line)
    end
    return false
  end

  T.setup({})
  T.open_and_index("keyvault/tokens.py")
  local first = T.ask("CodeciteAsk What does the sign function do?")
  T.report.first = first
  T.report.echoes_after_first = vim.deepcopy(T.report.echoes)
  T.ask("CodeciteAsk Where is it called?")
  T.report.conversation_after_two = #require("codecite").conversation

  -- A third question, cancelled while the model is being asked.
  vim.cmd("CodeciteAsk And how are API keys rotated?")
  T.wait(30000, function()
    watch_stages()
    return stages[#stages] == "Asking the model…"
  end)
  vim.cmd("CodeciteCancel")
  T.report.cancelled_lines = T.lines(T.answer_buf())
  T.report.echo = vim.fn.execute("messages")
  T.wait(6000, watch_stages) -- the model's reply would have come by now: it must not show
  T.report.after_wait_lines = T.lines(T.answer_buf())
  T.report.conversation_after_cancel = #require("codecite").conversation

  vim.cmd("CodeciteNew")
  T.ask("CodeciteAsk How are tokens verified?")
end)
