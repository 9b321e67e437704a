-- A model (mocked through litellm) cites a quote that is not in the code: the gate withholds the
-- answer, and the answer buffer says so in plain words, with the closest places to open.
local here = debug.getinfo(1, "S").source:sub(2)
local T = dofile(vim.fs.joinpath(vim.fs.dirname(here), "common.lua"))
local where = require("codecite.answer").where

T.run(function()
  T.setup()
  T.open_and_index("keyvault/keys.py")
  local refused = T.ask("CodeciteAsk How are API keys rotated?")
  T.report.refusal = refused
  local ref = refused.answer.retrieved[#refused.answer.retrieved]
  T.press_in_answer(T.find(refused.lines, "  " .. where(ref)), "<CR>")
  T.report.refusal_open = { ref = ref, at = T.wait_at(ref.path, ref.start_line) }
  vim.cmd("CodeciteCitations")
  T.report.quickfix_items = #vim.fn.getqflist()
end)
