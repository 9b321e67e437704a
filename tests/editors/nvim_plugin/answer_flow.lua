-- Ask, follow citations with <CR>/gd (also after the cited lines moved), fill the quickfix list,
-- ask about a visual selection, get a refusal, run :checkhealth.
local here = debug.getinfo(1, "S").source:sub(2)
local T = dofile(vim.fs.joinpath(vim.fs.dirname(here), "common.lua"))
local place = require("codecite.render").place

T.run(function()
  T.setup()
  T.open_and_index("keyvault/tokens.py")

  vim.cmd("CodeciteStatus")
  T.wait(10000, function()
    return #T.report.notifications > 0
  end)

  local asked = T.ask("CodeciteAsk How are API keys rotated?")
  T.report.answer = asked
  T.report.answer_view = {
    markdown = vim.treesitter.highlighter.active[T.answer_buf()] ~= nil,
    conceallevel = vim.wo[vim.fn.bufwinid(T.answer_buf())].conceallevel,
  }
  local claims = vim.tbl_filter(function(span)
    return span.kind == "claim"
  end, asked.answer.spans)
  local first, second = claims[1].citations[1], nil
  for _, claim in ipairs(claims) do
    if claim.citations[1].path ~= first.path then
      second = claim.citations[1]
      break
    end
  end

  -- <CR> on the citation line opens the cited lines.
  T.press_in_answer(T.find(asked.lines, "  " .. place(first)), "<CR>")
  T.report.enter = { citation = first, at = T.wait_at(first.path, first.start_line) }

  -- gd on the first quote line of another citation does the same.
  local quote_line = T.find(asked.lines, "  " .. place(second)) + 1
  T.press_in_answer(quote_line, "gd")
  T.report.gd = { citation = second, at = T.wait_at(second.path, second.start_line) }

  -- The cited lines move down by 3 in the open buffer: the server resolves the new place.
  local cited_buf = vim.fn.bufnr(T.repo .. "/" .. first.path)
  vim.api.nvim_buf_set_lines(cited_buf, 0, 0, false, { "# one", "# two", "# three" })
  vim.wait(600) -- didChange is debounced by the client
  T.press_in_answer(T.find(asked.lines, "  " .. place(first)), "<CR>")
  T.report.moved = { at = T.wait_at(first.path, first.start_line + 3) }
  vim.cmd("silent undo") -- back to the text on disk (the cursor is in that file)

  vim.cmd("CodeciteCitations")
  local qf = vim.fn.getqflist({ items = 1, title = 1 })
  T.report.quickfix = { title = qf.title, items = {} }
  for _, item in ipairs(qf.items) do
    table.insert(T.report.quickfix.items, {
      filename = vim.api.nvim_buf_get_name(item.bufnr),
      lnum = item.lnum,
      end_lnum = item.end_lnum,
      text = item.text,
    })
  end

  -- :'<,'>CodeciteAsk over rotate_key's body: the question carries the selection and its place.
  require("codecite").focus_code_window() -- :copen moved the cursor into the quickfix window
  if not vim.endswith(vim.api.nvim_buf_get_name(0), "/keyvault/keys.py") then
    vim.cmd.edit(vim.fn.fnameescape(T.repo .. "/keyvault/keys.py"))
  end
  T.report.visual = T.ask("52,56CodeciteAsk What does this do?")
  local client = require("codecite").client()
  local history = require("codecite").request_sync(client, "codecite/history", { limit = 1 }, 10000)
  T.report.history = history and history.result or vim.NIL

  -- A question the repository cannot answer: a refusal in plain words, with places to open.
  local refused = T.ask("CodeciteAsk What is the airspeed velocity of an unladen swallow?")
  T.report.refusal = refused
  local ref = refused.answer.retrieved[1]
  T.press_in_answer(T.find(refused.lines, "  " .. place(ref)), "<CR>")
  T.report.refusal_open = { ref = ref, at = T.wait_at(ref.path, ref.start_line) }

  vim.cmd("checkhealth codecite")
  T.report.health = T.lines(0)
  T.report.index_dir_exists = vim.fn.isdirectory(vim.json.decode(os.getenv("CODECITE_NVIM_SETUP")).settings.index_dir) == 1
end)
