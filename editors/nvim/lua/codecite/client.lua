-- The language-server client: starting it for a buffer's repository, finding it again, and the
-- small differences between Neovim 0.10 and 0.11 client methods.
local config = require("codecite.config")

local M = {}

M.NAME = "codecite"

local has_011 = vim.fn.has("nvim-0.11") == 1

-- 0.11 made client methods take `self` (client:request); 0.10 only has the field form.
local function call(client, method, ...)
  if has_011 then
    return client[method](client, ...)
  end
  return client[method](...)
end

function M.request(client, method, params, handler, bufnr)
  return call(client, "request", method, params, handler, bufnr)
end

function M.request_sync(client, method, params, timeout_ms, bufnr)
  return call(client, "request_sync", method, params, timeout_ms, bufnr)
end

function M.cancel_request(client, id)
  return call(client, "cancel_request", id)
end

function M.notify_server(client, method, params)
  return call(client, "notify", method, params)
end

function M.say(message, level)
  vim.notify("codecite: " .. message, level or vim.log.levels.INFO)
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
  local root = vim.fs.root(bufnr, config.options.root_markers)
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
local function show_document(err, params, ctx, cfg)
  require("codecite.render").focus_code_window(require("codecite.commands").origin_win())
  return vim.lsp.handlers["window/showDocument"](err, params, ctx, cfg)
end

--- Whether the user trusts this repository's own settings, by vim.secure's database
--- (stdpath("state")/trust, "<sha256> <realpath>" per line, written by `:trust`): the root folder
--- trusted, or every settings file present (`.codecite.toml`, `pyproject.toml`) trusted as it
--- is now (an edited file no longer matches its hash, as vim.secure.read would say).
---@param root string
---@return boolean
function M.repository_trusted(root)
  local trusted = {}
  local db = io.open(vim.fn.stdpath("state") .. "/trust", "r")
  if db then
    for line in vim.gsplit(db:read("*a") or "", "\n") do
      local hash, path = line:match("^(%S+) (.+)$")
      if hash then
        trusted[path] = hash
      end
    end
    db:close()
  end
  local real_root = vim.uv.fs_realpath(root)
  if real_root and trusted[real_root] == "directory" then
    return true
  end
  local found = false
  for _, name in ipairs({ ".codecite.toml", "pyproject.toml" }) do
    local path = vim.uv.fs_realpath(root .. "/" .. name)
    local file = path and io.open(path, "r")
    if file then
      local contents = file:read("*a") or ""
      file:close()
      if trusted[path] ~= vim.fn.sha256(contents) then
        return false
      end
      found = true
    end
  end
  return found
end

local function client_config()
  local settings = config.options.settings or {}
  return {
    name = M.NAME,
    cmd = config.server_cmd(),
    init_options = settings,
    -- The server takes model, key variable and index folder from the repository's own settings
    -- only when the user trusts it: `settings.trusted`, else what vim.secure says.
    before_init = function(params, cfg)
      if settings.trusted == nil and cfg.root_dir then
        params.initializationOptions = vim.tbl_extend(
          "force",
          params.initializationOptions or {},
          { trusted = M.repository_trusted(cfg.root_dir) }
        )
      end
    end,
    -- Neovim sends these with workspace/didChangeConfiguration right after initialize.
    settings = { codecite = settings },
    handlers = {
      ["window/showDocument"] = show_document,
      ["$/progress"] = require("codecite.progress").handler,
    },
    on_attach = config.options.on_attach,
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
  local cfg = client_config()
  cfg.root_dir = root
  return vim.lsp.start(cfg, { bufnr = bufnr })
end

local has_lsp_config = type(vim.lsp.config) == "table" and vim.lsp.enable ~= nil -- Neovim 0.11+

function M.enable_autostart()
  if has_lsp_config then
    local cfg = client_config()
    cfg.filetypes = config.options.filetypes
    cfg.root_dir = function(bufnr, on_dir)
      local root = M.find_root(bufnr)
      if root then
        on_dir(root)
      end
    end
    vim.lsp.config(M.NAME, cfg)
    vim.lsp.enable(M.NAME)
    return
  end
  local group = vim.api.nvim_create_augroup("codecite_autostart", { clear = true })
  local filetypes = config.options.filetypes
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = filetypes or "*",
    callback = function(event)
      M.start(event.buf)
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local ft = vim.bo[buf].filetype
    if
      vim.api.nvim_buf_is_loaded(buf)
      and ft ~= ""
      and (not filetypes or vim.tbl_contains(filetypes, ft))
    then
      M.start(buf)
    end
  end
end

--- A setup() that turns autostart off undoes an earlier one that turned it on.
function M.disable_autostart()
  pcall(vim.api.nvim_del_augroup_by_name, "codecite_autostart")
  if has_lsp_config then
    vim.lsp.enable(M.NAME, false)
  end
end

--- The codecite client for a buffer, else any running codecite client.
---@param bufnr? integer
---@return vim.lsp.Client?
function M.get(bufnr)
  local attached = vim.lsp.get_clients({ name = M.NAME, bufnr = bufnr or 0 })
  if #attached > 0 then
    return attached[1]
  end
  return vim.lsp.get_clients({ name = M.NAME })[1]
end

--- The client, or nil after telling the user why there is none.
---@return vim.lsp.Client?
function M.get_or_explain()
  local client = M.get()
  if not client then
    M.say(
      (
        "no server running: open a file of the repository; if one is open, the server "
        .. "command `%s` did not start (see :checkhealth codecite)"
      ):format(table.concat(config.server_cmd(), " ")),
      vim.log.levels.ERROR
    )
  end
  return client
end

---@param client vim.lsp.Client
---@return string
function M.root(client)
  local folders = client.workspace_folders
  if folders and folders[1] then
    return vim.uri_to_fname(folders[1].uri)
  end
  return client.root_dir or client.config.root_dir or vim.fn.getcwd()
end

-- codecite/wording per client: the refusal words the CLI and hover use (core/wording.json).
local wordings = {}

--- Call `callback(wording)` with the server's wording, fetched once per client; nil when the
--- server does not have the request (older versions): the renderer then names the reason code.
---@param client vim.lsp.Client
---@param callback fun(wording: codecite.Wording?)
function M.wording(client, callback)
  local cached = wordings[client.id]
  if cached ~= nil then
    return callback(cached or nil)
  end
  M.request(client, "codecite/wording", vim.empty_dict(), function(err, result)
    wordings[client.id] = (not err and type(result) == "table") and result or false
    callback(wordings[client.id] or nil)
  end)
end

return M
