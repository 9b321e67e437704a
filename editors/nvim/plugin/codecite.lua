-- Commands exist as soon as the plugin is on the runtime path, before (or without) setup():
-- :CodeciteStart then uses the default options. Modules load only when a command runs.
if vim.g.loaded_codecite then
  return
end
vim.g.loaded_codecite = true

local function run(name)
  return function(...)
    return require("codecite.commands")[name](...)
  end
end

local command = vim.api.nvim_create_user_command
command("CodeciteAsk", function(opts)
  local range = opts.range > 0 and { line1 = opts.line1, line2 = opts.line2 } or nil
  require("codecite.commands").ask(opts.args, range)
end, { nargs = "+", range = true, desc = "Ask codecite about the repository (or the selection)" })
command(
  "CodeciteCitations",
  run("citations_to_quickfix"),
  { desc = "Put the last answer's citations in the quickfix list" }
)
command("CodeciteStatus", run("status"), { desc = "Show codecite's index status" })
command("CodeciteReindex", run("reindex"), { desc = "Re-index the workspace" })
command("CodeciteStart", run("start"), { desc = "Start codecite for the current buffer" })
command("CodeciteNew", run("new_conversation"), { desc = "Start a new conversation (no follow-up)" })
command("CodeciteHistory", function()
  require("codecite.past").pick()
end, { desc = "Pick a past answer (any conversation) and show it" })
command("CodeciteCancel", run("cancel"), { desc = "Stop the question being answered" })

vim.api.nvim_create_autocmd("FileType", {
  group = vim.api.nvim_create_augroup("codecite_answer", { clear = true }),
  pattern = "codecite",
  callback = function(event)
    local function map(lhs)
      vim.keymap.set("n", lhs, run("open_under_cursor"), {
        buffer = event.buf,
        desc = "codecite: open the citation under the cursor",
      })
    end
    map("<CR>")
    map("gd")
    vim.keymap.set("n", "q", function()
      pcall(vim.cmd.close) -- the last window cannot close; leave it be
    end, { buffer = event.buf, desc = "codecite: close the answer window" })
  end,
})

-- A hover's citation links: `gx`/<CR> open the cited lines once the hover window is entered.
vim.api.nvim_create_autocmd("WinEnter", {
  group = vim.api.nvim_create_augroup("codecite_hover_links", { clear = true }),
  callback = function()
    require("codecite.links").attach(vim.api.nvim_get_current_win())
  end,
})
