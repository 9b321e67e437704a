-- Citation links in hovers, `[path:L10-14](file:///abs/path#L10)`: `gx` and <CR> on one (in the
-- hover window: press K again to enter it) open the file at that line in a code window.
local M = {}

local LINK = "()%[[^%]]*%]%((file://[^)%s]+)%)()"

--- The link under the cursor, else the first one after it on the line.
---@return string?
function M.under_cursor()
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2] + 1
  for _, url, stop in line:gmatch(LINK) do
    if col < stop then
      return url
    end
  end
end

--- Open `file:///path#L10`: the hover closes, the file opens in a code window at line 10.
---@param url string
function M.open(url)
  local uri, line = url:match("^([^#]+)#L(%d+)")
  local path = vim.uri_to_fname(uri or url)
  local win = vim.api.nvim_get_current_win()
  if vim.api.nvim_win_get_config(win).relative ~= "" then
    pcall(vim.api.nvim_win_close, win, true)
  end
  require("codecite.render").focus_code_window(require("codecite.commands").origin_win())
  if vim.fs.normalize(vim.api.nvim_buf_get_name(0)) ~= vim.fs.normalize(path) then
    vim.cmd.edit(vim.fn.fnameescape(path))
  end
  local lnum = math.min(tonumber(line) or 1, vim.api.nvim_buf_line_count(0))
  vim.api.nvim_win_set_cursor(0, { lnum, 0 })
end

--- `gx`/<CR>: follow the link on this line; `gx` elsewhere does what it always does.
---@param fallback? string keys to run when the line has no citation link
function M.follow(fallback)
  local url = M.under_cursor()
  if url then
    M.open(url)
  elseif fallback then
    vim.api.nvim_feedkeys(vim.keycode(fallback), "n", false)
  end
end

--- Map `gx` and <CR> in a floating window whose text holds citation links (a codecite hover).
---@param win integer
function M.attach(win)
  local buf = vim.api.nvim_win_get_buf(win)
  if vim.api.nvim_win_get_config(win).relative == "" or vim.b[buf].codecite_links then
    return
  end
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  if not text:find("%]%(file://[^)%s]+#L%d+%)") then
    return
  end
  vim.b[buf].codecite_links = true
  for _, lhs in ipairs({ "gx", "<CR>" }) do
    vim.keymap.set("n", lhs, function()
      M.follow(lhs == "gx" and "gx" or nil)
    end, { buffer = buf, desc = "codecite: open the cited lines" })
  end
end

return M
