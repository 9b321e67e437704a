-- Headless Neovim smoke test: start the real codecite server with vim.lsp.start, wait for the
-- index, hover a symbol and print the hover markdown. Exit code 0 only when the hover cites
-- the expected path. Inputs come from the environment (set by tests/test_nvim_smoke.py).
local repo = assert(os.getenv("CODECITE_REPO"))
local file = assert(os.getenv("CODECITE_FILE"))
local line = tonumber(assert(os.getenv("CODECITE_LINE")))
local character = tonumber(assert(os.getenv("CODECITE_CHARACTER")))
local expect = assert(os.getenv("CODECITE_EXPECT"))
local python = assert(os.getenv("CODECITE_PYTHON"))

local function fail(message)
  io.stderr:write("nvim smoke: " .. message .. "\n")
  os.exit(1)
end

vim.cmd.edit(vim.fn.fnameescape(file))
local bufnr = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start({
  name = "codecite",
  cmd = { python, "-m", "codecite_lsp", "serve" },
  root_dir = repo,
}, { bufnr = bufnr })
if not client_id then
  fail("vim.lsp.start returned nil")
end
local client = vim.lsp.get_client_by_id(client_id)

if not vim.wait(20000, function() return client.initialized end, 50) then
  fail("server did not initialize")
end

-- Indexing runs in the background after `initialized`: poll codecite/status until done.
local indexed = vim.wait(60000, function()
  local reply = client:request_sync("codecite/status", {}, 5000, bufnr)
  if not reply or reply.err or not reply.result then
    return false
  end
  local root = reply.result.roots[1]
  return root ~= nil and root.files_indexed > 0 and root.pending == 0 and not root.indexing
end, 200)
if not indexed then
  fail("index never finished")
end

local reply = client:request_sync("textDocument/hover", {
  textDocument = { uri = vim.uri_from_bufnr(bufnr) },
  position = { line = line, character = character },
}, 20000, bufnr)
if not reply or reply.err then
  fail("hover failed: " .. vim.inspect(reply and reply.err))
end
local result = reply.result
if result == nil or result == vim.NIL then
  fail("hover returned null")
end
local markdown = result.contents.value
io.stdout:write(markdown .. "\n")
client:stop()
if not markdown:find(expect, 1, true) then
  fail("hover does not cite " .. expect)
end
os.exit(0)
