-- :checkhealth codecite — is the server there, which version, and how far is the index.
local M = {}

local health = vim.health

---@param cmd string[]
---@return string? version, string? problem
local function server_version(cmd)
  local args = vim.list_extend(vim.deepcopy(cmd), { "--version" })
  local ok, process = pcall(vim.system, args, { text = true })
  if not ok then
    return nil, tostring(process)
  end
  local result = process:wait(20000)
  local output = vim.trim((result.stdout or "") .. (result.stderr or ""))
  if result.code ~= 0 then
    return nil, ("`%s` exited with %d: %s"):format(table.concat(args, " "), result.code, output)
  end
  return output, nil
end

local function check_server()
  local cmd = require("codecite.config").server_cmd()
  local exe = cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    health.error(("server command not found: %s"):format(exe), {
      "Install the server: pip install codecite-lsp",
      "or point setup({ cmd = { '/path/to/python', '-m', 'codecite_lsp', 'serve' } }) at it",
    })
    return
  end
  health.ok(("server command: %s (%s)"):format(table.concat(cmd, " "), vim.fn.exepath(exe)))
  local version, problem = server_version(cmd)
  if version then
    health.ok("server version: " .. version)
  else
    health.warn(
      "could not read the server version: " .. problem,
      { "Is codecite_lsp installed for this interpreter?" }
    )
  end
end

--- Every codecite client, also those still starting (get_clients lists only initialized ones).
---@return vim.lsp.Client[]
local function all_clients()
  local name = require("codecite.client").NAME
  return vim.lsp.get_clients({ name = name, _uninitialized = true })
end

---@param clients vim.lsp.Client[] the clients when :checkhealth began (before the version check)
local function check_index(clients)
  local client_mod = require("codecite.client")
  if #clients == 0 then
    local markers = require("codecite.config").options.root_markers
    health.info(
      "no codecite server is running: open a file of a repository (root markers: "
        .. table.concat(markers, ", ")
        .. ")"
    )
    return
  end
  for _, client in ipairs(clients) do
    if not client.initialized then
      health.info(
        ("server %d is starting (initializing) for %s: :checkhealth codecite again in a moment"):format(
          client.id,
          tostring(client.root_dir or client.config.root_dir)
        )
      )
      goto next
    end
    local reply, err = client_mod.request_sync(client, "codecite/status", vim.empty_dict(), 5000)
    if not reply then
      health.warn(("server %d did not answer codecite/status: %s"):format(client.id, tostring(err)))
    elseif reply.err then
      health.warn(("codecite/status failed: %s"):format(reply.err.message))
    else
      for _, line in ipairs(require("codecite.render").status_lines(reply.result)) do
        health.ok("index " .. line)
      end
    end
    ::next::
  end
end

function M.check()
  local clients = all_clients() -- now: the version check below takes seconds, a start does not
  health.start("codecite: Neovim")
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim 0.10 or newer is required")
  end
  if require("codecite.config").configured then
    health.ok("require('codecite').setup() was called")
  else
    health.warn(
      "require('codecite').setup() was not called: files do not start the server (:CodeciteStart does)",
      { "Add require('codecite').setup({}) to your config" }
    )
  end
  health.start("codecite: server")
  check_server()
  health.start("codecite: index")
  check_index(clients)
end

return M
