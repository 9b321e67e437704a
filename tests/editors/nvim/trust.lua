-- What the plugin tells the server about trusting a repository's own settings, as vim.secure
-- (`:trust`) records it. Prints a JSON object on stdout.
local root = vim.fn.tempname()
vim.fn.mkdir(root, "p")
vim.fn.writefile({ "model = 'openai/gpt-4o-mini'" }, root .. "/.codecite.toml")
local client = require("codecite.client")
local result = { untrusted = client.repository_trusted(root) }
vim.cmd.edit(root .. "/.codecite.toml")
vim.secure.trust({ action = "allow", bufnr = 0 })
result.trusted = client.repository_trusted(root)
vim.fn.writefile({ "model = 'ollama/elsewhere'" }, root .. "/.codecite.toml")
result.edited_after_trust = client.repository_trusted(root)
io.stdout:write(vim.json.encode(result))
vim.cmd("qa!")
