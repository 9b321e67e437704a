-- :CodeciteHistory after :CodeciteNew: two questions asked, a new conversation started, then the
-- user lists past answers one per page (PAGE_SIZE 1, so the second is read with offset 1), loads
-- the older one and opens it; then asks a question, which must stand alone.
local here = debug.getinfo(1, "S").source:sub(2)
local T = dofile(vim.fs.joinpath(vim.fs.dirname(here), "common.lua"))

T.run(function()
  local client = require("codecite.client")
  local send = client.request
  T.report.history_params = {}
  T.report.sent = {}
  client.request = function(lsp_client, method, params, ...)
    if method == "codecite/history" then
      table.insert(T.report.history_params, vim.deepcopy(params))
    elseif method == "codecite/ask" then
      table.insert(T.report.sent, vim.deepcopy(params))
    end
    return send(lsp_client, method, params, ...)
  end
  -- The user's choices in vim.ui.select: first "Load older answers…", then the oldest answer.
  T.report.lists = {}
  vim.ui.select = function(items, opts, on_choice)
    local shown = {}
    for _, item in ipairs(items) do
      table.insert(shown, opts.format_item(item))
    end
    table.insert(T.report.lists, shown)
    vim.schedule(function()
      on_choice(#T.report.lists == 1 and items[#items] or items[2])
    end)
  end
  T.setup({})
  T.open_and_index("keyvault/tokens.py")
  T.ask("CodeciteAsk What does the sign function do?")
  T.ask("CodeciteAsk How are tokens verified?")
  vim.cmd("CodeciteNew")
  local commands = require("codecite.commands")
  local before = commands.last
  require("codecite.past").PAGE_SIZE = 1
  vim.cmd("CodeciteHistory")
  T.report.shown = T.wait(30000, function()
    return commands.last ~= nil and commands.last ~= before
  end)
  T.report.lines = T.lines(T.answer_buf())
  local first_citation
  for lnum, target in pairs(commands.last and commands.last.targets or {}) do
    if target.kind == "citation" and (not first_citation or lnum < first_citation) then
      first_citation = lnum
    end
  end
  -- <CR> on the past answer's citation opens the cited file.
  if first_citation then
    T.report.citation_line = T.report.lines[first_citation]
    T.press_in_answer(first_citation, "<CR>")
    T.wait(15000, function()
      return vim.bo.buftype == "" and vim.endswith(vim.api.nvim_buf_get_name(0), ".py")
    end)
    T.report.opened = T.where()
  end
  T.ask("CodeciteAsk What is a KeyStore?")
end)
