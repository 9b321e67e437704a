-- :checkhealth while the server is still starting (its command sleeps first), the statusline's
-- indexing progress, then a hover: how it renders, and `gx` on its citation link.
local here = debug.getinfo(1, "S").source:sub(2)
local T = dofile(vim.fs.joinpath(vim.fs.dirname(here), "common.lua"))

-- The statusline text; "(none)" from a plugin without require("codecite").status().
local function status()
  local codecite = require("codecite")
  return codecite.status and codecite.status() or "(none)"
end

T.run(function()
  T.setup({ cmd = { assert(os.getenv("CODECITE_NVIM_SLOW_CMD")) } })
  local seen = {}
  T.report.status_seen = seen
  vim.api.nvim_create_autocmd("LspProgress", {
    callback = function()
      vim.schedule(function() -- after every LspProgress handler, the plugin's too
        table.insert(seen, status())
      end)
    end,
  })
  local init = T.repo .. "/keyvault/__init__.py"
  vim.cmd.edit(vim.fn.fnameescape(init))
  T.report.started = T.wait(10000, function()
    return #vim.lsp.get_clients({ name = "codecite", _uninitialized = true }) > 0
  end)
  vim.cmd("checkhealth codecite")
  T.report.health_starting = T.lines(0)
  vim.cmd("tabonly")
  vim.cmd.edit(vim.fn.fnameescape(init))

  T.open_and_index("keyvault/__init__.py")
  T.wait(2000, function()
    return seen[#seen] == ""
  end)
  T.report.status_after = status()

  -- A normal terminal's width; the hover of `rotate_key` where __init__.py imports it.
  vim.o.columns = 160
  vim.o.lines = 50
  local row = T.find(T.lines(0), "from .keys import KeyStore, rotate_key")
  vim.api.nvim_win_set_cursor(0, { row, #"from .keys import KeyStore, " + 2 })
  local origin = vim.api.nvim_get_current_win()
  vim.lsp.buf.hover()
  local float
  T.wait(30000, function()
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.api.nvim_win_get_config(win).relative ~= "" then
        float = win
        return true
      end
    end
    return false
  end)
  assert(float, "no hover window opened")
  local buf = vim.api.nvim_win_get_buf(float)
  local lines = T.lines(buf)
  T.report.hover = {
    lines = lines,
    screen_lines = vim.api.nvim_win_text_height(float, {}).all,
    filetype = vim.bo[buf].filetype,
  }
  -- Enter the hover (K again does the same) and press gx on the first citation link.
  vim.api.nvim_set_current_win(float)
  local link_row, url
  for i, line in ipairs(lines) do
    url = line:match("%]%((file://[^)]+)%)")
    if url then
      link_row = i
      break
    end
  end
  if not link_row then
    T.report.link = { url = vim.NIL } -- the test says what is missing
    return
  end
  vim.api.nvim_win_set_cursor(float, { link_row, 0 })
  vim.api.nvim_feedkeys(vim.keycode("gx"), "x", false)
  T.report.link = { url = url, at = T.where(), origin_win = vim.api.nvim_get_current_win() == origin }
end)
