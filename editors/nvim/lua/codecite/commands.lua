-- What the user commands do: ask, open a citation, quickfix, status, reindex, start.
local client = require("codecite.client")
local render = require("codecite.render")

local M = {}

--- The last answer shown, for <CR>, :CodeciteCitations and the showDocument window choice.
---@type {question: string, answer: table, client_id: integer, root: string, origin_win: integer, targets: table}?
M.last = nil
local asked = 0 -- sequence number: a slow reply to an older question must not replace a newer one

---@return integer? the window the last question was asked from
function M.origin_win()
  return M.last and M.last.origin_win
end

--- The question sent for a selection: its text and place go along with what was asked.
local function selection_params(lsp_client, question, range)
  local bufnr = vim.api.nvim_get_current_buf()
  local params = { question = question }
  local lines = vim.api.nvim_buf_get_lines(bufnr, range.line1 - 1, range.line2, false)
  local name = vim.fs.normalize(vim.api.nvim_buf_get_name(bufnr))
  local root = vim.fs.normalize(client.root(lsp_client))
  local inside = vim.bo[bufnr].buftype == "" and vim.startswith(name, root .. "/")
  local label = inside and name:sub(#root + 2) or (name ~= "" and name or "selection")
  params.question = ("%s\n\nSelected code (%s:%d-%d):\n%s"):format(
    question,
    label,
    range.line1,
    range.line2,
    table.concat(lines, "\n")
  )
  if inside then -- the server resolves uri+position to the enclosing symbol as context
    params.uri = vim.uri_from_bufnr(bufnr)
    local indent = (lines[1] or ""):find("%S") or 1
    params.position = { line = range.line1 - 1, character = indent - 1 }
  end
  return params
end

--- Ask a question; `range` (1-based inclusive lines of the current buffer) adds the selection.
---@param question string
---@param range? {line1: integer, line2: integer}
function M.ask(question, range)
  if vim.trim(question) == "" then
    client.say("usage: :CodeciteAsk {question}", vim.log.levels.ERROR)
    return
  end
  local lsp_client = client.get_or_explain()
  if not lsp_client then
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local params = range and selection_params(lsp_client, question, range) or { question = question }
  asked = asked + 1
  local ticket = asked
  local origin_win = vim.api.nvim_get_current_win()
  local buf = render.buffer()
  M.last = nil -- the buffer no longer shows the previous answer: <CR> must not open its lines
  render.write(buf, render.render_message(question, "Asking codecite…", "Comment"))
  render.show()
  client.request(lsp_client, "codecite/ask", params, function(err, result)
    if ticket ~= asked then
      return
    end
    if err then
      local failed = "The request failed: " .. err.message
      render.write(buf, render.render_message(question, failed, "ErrorMsg"))
      client.say("ask failed: " .. err.message, vim.log.levels.ERROR)
      return
    end
    client.wording(lsp_client, function(wording)
      if ticket ~= asked then
        return
      end
      local rendered = render.render(question, result, wording)
      render.write(buf, rendered)
      M.last = {
        question = question,
        answer = result,
        client_id = lsp_client.id,
        root = client.root(lsp_client),
        origin_win = origin_win,
        targets = rendered.targets,
      }
    end)
  end, bufnr)
end

--- <CR>/gd in the answer buffer: open the citation (through the server) or retrieved place under
--- the cursor.
function M.open_under_cursor()
  local last = M.last
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  local target = last and last.targets[lnum]
  if not target then
    client.say("no citation on this line", vim.log.levels.WARN)
    return
  end
  if target.kind == "retrieved" then
    -- Closest places of a refusal are not citations (no quote to resolve): open them directly.
    render.focus_code_window(last.origin_win)
    local path = vim.fs.joinpath(last.root, target.item.path)
    if vim.fs.normalize(vim.api.nvim_buf_get_name(0)) ~= vim.fs.normalize(path) then
      vim.cmd.edit(vim.fn.fnameescape(path)) -- never re-edit: that fails on unsaved changes
    end
    local line = math.min(target.item.start_line, vim.api.nvim_buf_line_count(0))
    vim.api.nvim_win_set_cursor(0, { line, 0 })
    return
  end
  local lsp_client = vim.lsp.get_client_by_id(last.client_id) or client.get_or_explain()
  if not lsp_client then
    return
  end
  local command = { command = "codecite.openCitation", arguments = { target.item } }
  client.request(lsp_client, "workspace/executeCommand", command, function(err)
    if err then
      client.say("cannot open the citation: " .. err.message, vim.log.levels.ERROR)
    end
  end)
end

function M.citations_to_quickfix()
  if not M.last then
    client.say("no answer yet: ask with :CodeciteAsk {question}", vim.log.levels.WARN)
    return
  end
  local items = render.quickfix_items(M.last.answer, M.last.root)
  if #items == 0 then
    client.say("the last answer has no citations (it was a refusal)", vim.log.levels.WARN)
    return
  end
  vim.fn.setqflist({}, " ", { title = "codecite: " .. M.last.question, items = items })
  vim.cmd("botright copen")
end

function M.status()
  local lsp_client = client.get_or_explain()
  if not lsp_client then
    return
  end
  client.request(lsp_client, "codecite/status", vim.empty_dict(), function(err, result)
    if err then
      client.say("status failed: " .. err.message, vim.log.levels.ERROR)
      return
    end
    client.say(table.concat(render.status_lines(result), "\n"))
  end)
end

function M.reindex()
  local lsp_client = client.get_or_explain()
  if not lsp_client then
    return
  end
  local command = { command = "codecite.reindex", arguments = {} }
  client.request(lsp_client, "workspace/executeCommand", command, function(err)
    if err then
      client.say("reindex failed: " .. err.message, vim.log.levels.ERROR)
    else
      client.say("re-indexing started")
    end
  end)
end

function M.start()
  if not client.start() then
    client.say("this buffer is not a file: nothing to start for", vim.log.levels.WARN)
  end
end

return M
