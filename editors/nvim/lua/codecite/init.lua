-- codecite.nvim: Neovim client for codecite-lsp (answers about a repository, with verified
-- citations). Protocol: /work/shared/contracts.md; server: codecite_lsp/server.py.
local answer = require("codecite.answer")

local M = {}

M.NAME = "codecite"

---@class codecite.Options
---@field cmd? string[] server command; default `codecite serve`, else `python3 -m codecite_lsp serve`
---@field root_markers? string[] files/folders marking a repository root
---@field settings? table codecite settings (model, embedding, index_dir, ...) sent to the server
---@field filetypes? string[] attach only to these filetypes; nil attaches to every file
---@field autostart? boolean start the server when a file is opened (default true)
---@field on_attach? fun(client: vim.lsp.Client, bufnr: integer)

---@type codecite.Options
local defaults = {
  cmd = nil,
  root_markers = { ".codecite.toml", ".git" },
  settings = {},
  filetypes = nil,
  autostart = true,
  on_attach = nil,
}

---@type codecite.Options
M.options = vim.deepcopy(defaults)
M.configured = false -- setup() called; health reports it

--- The last answer shown, for <CR>, :CodeciteCitations and the showDocument window choice.
---@type {question: string, answer: table, client_id: integer, root: string, origin_win: integer, targets: table}?
M.last = nil
local asked = 0 -- sequence number: a slow reply to an older question must not replace a newer one

local has_011 = vim.fn.has("nvim-0.11") == 1

-- 0.11 made client methods take `self` (client:request); 0.10 only has the field form.
local function request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function send_notification(client, method, params)
  if has_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.request_sync(client, method, params, timeout_ms, bufnr)
  if has_011 then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

local function notify(message, level)
  vim.notify("codecite: " .. message, level or vim.log.levels.INFO)
end

---@return string[]
function M.server_cmd()
  if M.options.cmd then
    return M.options.cmd
  end
  if vim.fn.executable("codecite") == 1 then
    return { "codecite", "serve" }
  end
  return { "python3", "-m", "codecite_lsp", "serve" }
end

--- The repository root for a buffer: nearest root marker, else the working directory when the
--- file is inside it, else the file's folder. nil for buffers that are not files.
---@param bufnr integer
---@return string?
function M.find_root(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].buftype ~= "" or name == "" then
    return nil
  end
  local root = vim.fs.root(bufnr, M.options.root_markers)
  if root then
    return root
  end
  local file = vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
  local cwd = vim.fs.normalize(vim.fn.getcwd())
  if vim.startswith(file, cwd .. "/") then
    return cwd
  end
  return vim.fs.dirname(file)
end

--- window/showDocument lands in the current window: never let it replace the answer buffer.
local function show_document(err, params, ctx, config)
  M.focus_code_window()
  return vim.lsp.handlers["window/showDocument"](err, params, ctx, config)
end

local function client_config()
  local settings = M.options.settings or {}
  return {
    name = M.NAME,
    cmd = M.server_cmd(),
    init_options = settings,
    -- Neovim sends these with workspace/didChangeConfiguration right after initialize.
    settings = { codecite = settings },
    handlers = { ["window/showDocument"] = show_document },
    on_attach = M.options.on_attach,
  }
end

--- Start (or re-use) the server for a buffer's root; nil when the buffer is not a file.
---@param bufnr? integer
---@return integer? client_id
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local root = M.find_root(bufnr)
  if not root then
    return nil
  end
  local config = client_config()
  config.root_dir = root
  return vim.lsp.start(config, { bufnr = bufnr })
end

local function enable_autostart()
  if type(vim.lsp.config) == "table" and vim.lsp.enable then -- Neovim 0.11+
    local config = client_config()
    config.filetypes = M.options.filetypes
    config.root_dir = function(bufnr, on_dir)
      local root = M.find_root(bufnr)
      if root then
        on_dir(root)
      end
    end
    vim.lsp.config(M.NAME, config)
    vim.lsp.enable(M.NAME)
    return
  end
  local group = vim.api.nvim_create_augroup("codecite_autostart", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = M.options.filetypes or "*",
    callback = function(event)
      M.start(event.buf)
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local ft = vim.bo[buf].filetype
    if
      vim.api.nvim_buf_is_loaded(buf)
      and ft ~= ""
      and (not M.options.filetypes or vim.tbl_contains(M.options.filetypes, ft))
    then
      M.start(buf)
    end
  end
end

--- The codecite client for a buffer, else any running codecite client.
---@param bufnr? integer
---@return vim.lsp.Client?
function M.client(bufnr)
  local attached = vim.lsp.get_clients({ name = M.NAME, bufnr = bufnr or 0 })
  if #attached > 0 then
    return attached[1]
  end
  return vim.lsp.get_clients({ name = M.NAME })[1]
end

local function require_client()
  local client = M.client()
  if not client then
    notify(("no server running: open a file of the repository; if one is open, the server "
      .. "command `%s` did not start (see :checkhealth codecite)"):format(
      table.concat(M.server_cmd(), " ")), vim.log.levels.ERROR)
  end
  return client
end

---@param client vim.lsp.Client
---@return string
local function client_root(client)
  local folders = client.workspace_folders
  if folders and folders[1] then
    return vim.uri_to_fname(folders[1].uri)
  end
  return client.root_dir or client.config.root_dir or vim.fn.getcwd()
end

local function is_code_window(win)
  local buf = vim.api.nvim_win_get_buf(win)
  return vim.api.nvim_win_get_config(win).relative == "" and vim.bo[buf].buftype == ""
end

--- Make a normal file window current: the one the question was asked from, another file window
--- of this tab, or a new split above the answer.
function M.focus_code_window()
  local current = vim.api.nvim_get_current_win()
  if is_code_window(current) then
    return
  end
  local origin = M.last and M.last.origin_win
  if origin and vim.api.nvim_win_is_valid(origin) and is_code_window(origin) then
    vim.api.nvim_set_current_win(origin)
    return
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if is_code_window(win) then
      vim.api.nvim_set_current_win(win)
      return
    end
  end
  vim.cmd("aboveleft split")
end

-- :CodeciteAsk ---------------------------------------------------------------------------------

--- Ask a question; `range` (1-based inclusive lines of the current buffer) adds the selection.
---@param question string
---@param range? {line1: integer, line2: integer}
function M.ask(question, range)
  if vim.trim(question) == "" then
    notify("usage: :CodeciteAsk {question}", vim.log.levels.ERROR)
    return
  end
  local client = require_client()
  if not client then
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local params = { question = question }
  if range then
    local lines = vim.api.nvim_buf_get_lines(bufnr, range.line1 - 1, range.line2, false)
    local name = vim.fs.normalize(vim.api.nvim_buf_get_name(bufnr))
    local root = vim.fs.normalize(client_root(client))
    local inside = vim.bo[bufnr].buftype == "" and vim.startswith(name, root .. "/")
    local label = inside and name:sub(#root + 2) or (name ~= "" and name or "selection")
    params.question = ("%s\n\nSelected code (%s:%d-%d):\n%s"):format(
      question, label, range.line1, range.line2, table.concat(lines, "\n"))
    if inside then -- the server resolves uri+position to the enclosing symbol as context
      params.uri = vim.uri_from_bufnr(bufnr)
      local indent = (lines[1] or ""):find("%S") or 1
      params.position = { line = range.line1 - 1, character = indent - 1 }
    end
  end
  asked = asked + 1
  local ticket = asked
  local origin_win = vim.api.nvim_get_current_win()
  local buf = answer.buffer()
  M.last = nil -- the buffer no longer shows the previous answer: <CR> must not open its lines
  answer.write(buf, answer.render_message(question, "Asking codecite…", "Comment"))
  answer.show()
  request(client, "codecite/ask", params, function(err, result)
    if ticket ~= asked then
      return
    end
    if err then
      local failed = "The request failed: " .. err.message
      answer.write(buf, answer.render_message(question, failed, "ErrorMsg"))
      notify("ask failed: " .. err.message, vim.log.levels.ERROR)
      return
    end
    local rendered = answer.render(question, result)
    answer.write(buf, rendered)
    M.last = {
      question = question,
      answer = result,
      client_id = client.id,
      root = client_root(client),
      origin_win = origin_win,
      targets = rendered.targets,
    }
  end, bufnr)
end

--- <CR>/gd in the answer buffer: open the citation (through the server) or retrieved place under
--- the cursor.
function M.open_under_cursor()
  local last = M.last
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  local target = last and last.targets[lnum]
  if not target then
    notify("no citation on this line", vim.log.levels.WARN)
    return
  end
  if target.kind == "retrieved" then
    -- Closest places of a refusal are not citations (no quote to resolve): open them directly.
    M.focus_code_window()
    local path = vim.fs.joinpath(last.root, target.item.path)
    if vim.fs.normalize(vim.api.nvim_buf_get_name(0)) ~= vim.fs.normalize(path) then
      vim.cmd.edit(vim.fn.fnameescape(path)) -- never re-edit: that fails on unsaved changes
    end
    local line = math.min(target.item.start_line, vim.api.nvim_buf_line_count(0))
    vim.api.nvim_win_set_cursor(0, { line, 0 })
    return
  end
  local client = vim.lsp.get_client_by_id(last.client_id) or require_client()
  if not client then
    return
  end
  local command = { command = "codecite.openCitation", arguments = { target.item } }
  request(client, "workspace/executeCommand", command, function(err)
    if err then
      notify("cannot open the citation: " .. err.message, vim.log.levels.ERROR)
    end
  end)
end

-- :CodeciteCitations ---------------------------------------------------------------------------

function M.citations_to_quickfix()
  if not M.last then
    notify("no answer yet: ask with :CodeciteAsk {question}", vim.log.levels.WARN)
    return
  end
  local items = answer.quickfix_items(M.last.answer, M.last.root)
  if #items == 0 then
    notify("the last answer has no citations (it was a refusal)", vim.log.levels.WARN)
    return
  end
  vim.fn.setqflist({}, " ", { title = "codecite: " .. M.last.question, items = items })
  vim.cmd("botright copen")
end

-- :CodeciteStatus / :CodeciteReindex -----------------------------------------------------------

---@param status table codecite/status reply
---@return string[]
function M.status_lines(status)
  local lines = {}
  for _, root in ipairs(status.roots or {}) do
    local embedder = answer.present(root.embedder) and root.embedder or {}
    table.insert(lines, ("%s: %d files, %d chunks, %d pending%s; embedder %s (%s)"):format(
      root.root, root.files_indexed or 0, root.chunks or 0, root.pending or 0,
      root.indexing and ", indexing" or "", tostring(embedder.name), tostring(embedder.state)))
  end
  if #lines == 0 then
    table.insert(lines, "no workspace folder is open")
  end
  return lines
end

function M.status()
  local client = require_client()
  if not client then
    return
  end
  request(client, "codecite/status", {}, function(err, result)
    if err then
      notify("status failed: " .. err.message, vim.log.levels.ERROR)
      return
    end
    notify(table.concat(M.status_lines(result), "\n"))
  end)
end

function M.reindex()
  local client = require_client()
  if not client then
    return
  end
  request(client, "workspace/executeCommand", { command = "codecite.reindex", arguments = {} },
    function(err)
      if err then
        notify("reindex failed: " .. err.message, vim.log.levels.ERROR)
      else
        notify("re-indexing started")
      end
    end)
end

-- setup ----------------------------------------------------------------------------------------

local function create_commands()
  local command = vim.api.nvim_create_user_command
  command("CodeciteAsk", function(opts)
    local range = opts.range > 0 and { line1 = opts.line1, line2 = opts.line2 } or nil
    M.ask(opts.args, range)
  end, { nargs = "+", range = true, desc = "Ask codecite about the repository (or the selection)" })
  command("CodeciteCitations", M.citations_to_quickfix,
    { desc = "Put the last answer's citations in the quickfix list" })
  command("CodeciteStatus", M.status, { desc = "Show codecite's index status" })
  command("CodeciteReindex", M.reindex, { desc = "Re-index the workspace" })
  command("CodeciteStart", function()
    if not M.start() then
      notify("this buffer is not a file: nothing to start for", vim.log.levels.WARN)
    end
  end, { desc = "Start codecite for the current buffer" })

  vim.api.nvim_create_autocmd("FileType", {
    group = vim.api.nvim_create_augroup("codecite_answer", { clear = true }),
    pattern = "codecite",
    callback = function(event)
      local map = function(lhs)
        vim.keymap.set("n", lhs, M.open_under_cursor,
          { buffer = event.buf, desc = "codecite: open the citation under the cursor" })
      end
      map("<CR>")
      map("gd")
      vim.keymap.set("n", "q", function()
        pcall(vim.cmd.close) -- the last window cannot close; leave it be
      end, { buffer = event.buf, desc = "codecite: close the answer window" })
    end,
  })
end

---@param opts? codecite.Options
function M.setup(opts)
  -- Shallow on purpose: a list given by the user (cmd, root_markers) replaces the default whole.
  M.options = vim.tbl_extend("force", vim.deepcopy(defaults), opts or {})
  M.configured = true
  create_commands()
  -- A second setup() with new settings reaches servers that are already running.
  for _, client in ipairs(vim.lsp.get_clients({ name = M.NAME })) do
    client.settings = { codecite = M.options.settings }
    send_notification(client, "workspace/didChangeConfiguration", { settings = client.settings })
  end
  if M.options.autostart then
    enable_autostart()
  else -- a setup() that turns autostart off undoes an earlier one that turned it on
    pcall(vim.api.nvim_del_augroup_by_name, "codecite_autostart")
    if type(vim.lsp.config) == "table" and vim.lsp.enable then
      vim.lsp.enable(M.NAME, false)
    end
  end
end

return M
