-- Shared by the Neovim drivers: bounded waits, key presses, and the JSON report the test reads.
-- Every wait has a timeout, so a broken plugin or server fails the test fast instead of hanging.
local T = {}

T.repo = assert(os.getenv("CODECITE_NVIM_REPO"), "CODECITE_NVIM_REPO not set")
T.out = assert(os.getenv("CODECITE_NVIM_OUT"), "CODECITE_NVIM_OUT not set")
T.report = { steps = {}, notifications = {}, progress = {} }

-- Messages the plugin shows, kept for the test (and still shown).
local original_notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(T.report.notifications, { message = message, level = level })
  return original_notify(message, level, opts)
end

-- What the echo area was given, in order (nvim_echo without history leaves no :messages).
T.report.echoes = {}
local original_echo = vim.api.nvim_echo
vim.api.nvim_echo = function(chunks, history, opts)
  local text = {}
  for _, chunk in ipairs(chunks) do
    table.insert(text, chunk[1])
  end
  table.insert(T.report.echoes, table.concat(text))
  return original_echo(chunks, history, opts)
end

vim.api.nvim_create_autocmd("LspProgress", {
  callback = function(event)
    local value = event.data.params.value
    table.insert(T.report.progress, { kind = value.kind, title = value.title, percentage = value.percentage, message = value.message, token = event.data.params.token })
  end,
})

--- Wait until `cond()` is true; false after `ms` milliseconds.
function T.wait(ms, cond)
  return vim.wait(ms, cond, 50) == true
end

function T.setup(extra)
  local opts = vim.json.decode(assert(os.getenv("CODECITE_NVIM_SETUP")))
  require("codecite").setup(vim.tbl_extend("force", opts, extra or {}))
end

--- Open a repository file and wait for the server to attach and finish the first index pass.
--- `start_cmd` (e.g. "CodeciteStart") starts the server by hand when autostart is off.
function T.open_and_index(rel, start_cmd)
  vim.cmd.edit(vim.fn.fnameescape(T.repo .. "/" .. rel))
  if start_cmd then
    vim.cmd(start_cmd)
  end
  T.report.attached = T.wait(30000, function()
    return #vim.lsp.get_clients({ name = "codecite", bufnr = 0 }) > 0
  end)
  T.report.indexed = T.wait(120000, function()
    for _, p in ipairs(T.report.progress) do
      if p.kind == "end" then
        return true
      end
    end
    return false
  end)
end

function T.answer_buf()
  return vim.fn.bufnr(require("codecite.render").BUFNAME)
end

function T.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

--- Run an Ex command that asks, and wait for the answer to arrive.
function T.ask(ex)
  local before = require("codecite").last
  vim.cmd(ex)
  local arrived = T.wait(60000, function()
    local last = require("codecite").last
    return last ~= nil and last ~= before
  end)
  local last = require("codecite").last
  assert(arrived, ("no answer within 60 s to %q; the answer buffer shows: %s"):format(
    ex, table.concat(T.lines(T.answer_buf()), " | ")))
  return {
    answer = last.answer,
    lines = T.lines(T.answer_buf()),
  }
end

--- Put the cursor on line `lnum` of the answer window and press `keys` (mappings apply).
function T.press_in_answer(lnum, keys)
  local buf = T.answer_buf()
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_set_current_win(win)
    end
  end
  vim.api.nvim_win_set_cursor(0, { lnum, 0 })
  vim.api.nvim_feedkeys(vim.keycode(keys), "x", false)
end

--- Where the cursor is: the file and line the user would now be looking at.
function T.where()
  return {
    bufname = vim.api.nvim_buf_get_name(0),
    line = vim.api.nvim_win_get_cursor(0)[1],
    buftype = vim.bo.buftype,
    answer_visible = vim.fn.bufwinid(T.answer_buf()) ~= -1,
  }
end

--- Wait until the cursor is in `rel` on line `line`, then report where it is.
function T.wait_at(rel, line)
  T.wait(15000, function()
    local here = T.where()
    return vim.endswith(here.bufname, "/" .. rel) and here.line == line
  end)
  return T.where()
end

--- Line number (1-based) of the first line equal to `text`, or nil.
function T.find(lines, text)
  for i, line in ipairs(lines) do
    if line == text then
      return i
    end
  end
end

--- Run the scenario; whatever happens, write the report and quit.
function T.run(scenario)
  local ok, err = xpcall(scenario, debug.traceback)
  if not ok then
    T.report.error = err
  end
  -- Server messages (window/showMessage) are echoed into :messages, not vim.notify.
  T.report.messages = vim.split(vim.fn.execute("messages"), "\n", { trimempty = true })
  local file = assert(io.open(T.out, "w"))
  file:write(vim.json.encode(T.report))
  file:close()
  vim.cmd("qa!")
end

return T
