-- A model (mocked through litellm) cites a quote that is not in the code: the gate withholds the
-- answer, and the answer buffer says so in plain words, with the closest places to open.
local here = debug.getinfo(1, "S").source:sub(2)
local T = dofile(vim.fs.joinpath(vim.fs.dirname(here), "common.lua"))
local place = require("codecite.render").place

T.run(function()
  -- plugin/codecite.lua defines the commands before setup(); without a server they say why.
  T.report.before_setup = {
    commands = vim.tbl_filter(function(name)
      return vim.fn.exists(":" .. name) == 2
    end, { "CodeciteAsk", "CodeciteCitations", "CodeciteStatus", "CodeciteReindex", "CodeciteStart" }),
  }
  pcall(vim.cmd, "CodeciteStatus") -- an error message: inside vim.cmd it is raised as well
  T.report.before_setup.said = vim.deepcopy(T.report.notifications)
  T.report.notifications = {}

  -- Started by hand: the vim.lsp.start path (the one Neovim 0.10 uses) with its root detection.
  T.setup({ autostart = false })
  T.open_and_index("keyvault/keys.py", "CodeciteStart")
  T.report.root = require("codecite").client().root_dir
  local refused = T.ask("CodeciteAsk How are API keys rotated?")
  T.report.refusal = refused
  local ref = refused.answer.retrieved[#refused.answer.retrieved]
  T.press_in_answer(T.find(refused.lines, "  " .. place(ref)), "<CR>")
  T.report.refusal_open = { ref = ref, at = T.wait_at(ref.path, ref.start_line) }
  vim.cmd("CodeciteCitations")
  T.report.quickfix_items = #vim.fn.getqflist()

  -- A pasted file as the question: the server cuts it to the one question-length limit and
  -- still answers (or refuses) it; no request error.
  T.report.too_long = T.ask("CodeciteAsk How are API keys rotated? " .. string.rep("x", 100001))
end)
