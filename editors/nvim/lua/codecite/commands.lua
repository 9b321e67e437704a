-- What the user commands do: ask, open a citation, quickfix, status, reindex, start.
local client = require("codecite.client")
local config = require("codecite.config")
local conversation = require("codecite.conversation")
local progress = require("codecite.progress")
local render = require("codecite.render")

local M = {}

--- The last answer shown, for <CR>, :CodeciteCitations and the showDocument window choice.
---@type {question: string, answer: codecite.Answer, client_id: integer, root: string, origin_win: integer, targets: table}?
M.last = nil
local asked = 0 -- sequence number: a slow reply to an older question must not replace a newer one

--- The conversation a follow-up continues: {question, answer} turns since :CodeciteNew, those
--- of the root last asked about (each root's are kept across sessions: conversation.lua).
---@type {question: string, answer: codecite.Answer}[]
M.conversation = {}
local TURNS_SENT = 3 -- the server reads only the last few turns

--- The question being answered, for :CodeciteCancel, the progress stages and the claims
--- verified so far (`shown`: the preview as drawn, in M.last's shape, so <CR> opens its lines).
---@type {ticket: integer, client: table, request_id: integer?, token: string, question: string, buf: integer, root: string, origin_win: integer, stop: fun(), stage: string?, attempt: integer?, shown: table?}?
local pending = nil

--- The buffer while waiting: the spans verified so far, if any, with the stage under them as the
--- mark that more is arriving; else the stage alone.
local function draw_pending()
  local stage = pending.stage or "Asking codecite…"
  if not pending.shown then
    render.write(pending.buf, render.render_message(pending.question, stage, "Comment"))
    return
  end
  local rendered = render.render(pending.question, pending.shown.answer, nil, {
    line_at = render.file_lines(pending.root),
    arriving = stage .. " (:CodeciteCancel to stop)",
  })
  pending.shown.targets = rendered.targets
  render.write(pending.buf, rendered)
end

--- A `$/progress` snapshot on the question's partialResultToken: every span verified so far in
--- this attempt; a higher attempt (the stricter retry) replaces what was shown, an older one
--- never comes back.
local function preview(ticket, value)
  if not pending or pending.ticket ~= ticket or type(value.spans) ~= "table" then
    return
  end
  local attempt = value.attempt
  if type(attempt) ~= "number" or attempt % 1 ~= 0 or attempt < (pending.attempt or 0) then
    return
  end
  pending.attempt = attempt
  pending.shown = {
    question = pending.question,
    answer = { status = "answered", spans = value.spans },
    client_id = pending.client.id,
    root = pending.root,
    origin_win = pending.origin_win,
    targets = {},
  }
  draw_pending()
end

local progress_group = vim.api.nvim_create_augroup("codecite_ask_progress", { clear = true })
vim.api.nvim_create_autocmd("LspProgress", {
  group = progress_group,
  callback = function(event)
    local params = event.data and event.data.params or {}
    local value = params.value or {}
    if not pending or params.token ~= pending.token or value.kind == "end" or not value.message then
      return
    end
    -- The server's stage (retrieving, asking the model, verifying citations…) while waiting.
    pending.stage = value.message:sub(1, 1):upper() .. value.message:sub(2) .. "…"
    draw_pending()
    vim.api.nvim_echo({ { "codecite: " .. value.message .. "… (:CodeciteCancel to stop)" } }, false, {})
  end,
})

--- :CodeciteNew: the next question about this repository stands alone (also after a restart).
function M.new_conversation()
  local lsp_client = client.get()
  local root = lsp_client and client.root(lsp_client) or (M.last and M.last.root)
  if root then
    conversation.clear(root)
  end
  M.conversation = {}
  client.say("new conversation: the next question stands alone")
end

--- :CodeciteCancel: stop the question being answered (the server stops the model call).
function M.cancel()
  if not pending then
    client.say("no question is being answered", vim.log.levels.WARN)
    return
  end
  local stopping = pending
  pending = nil
  stopping.stop()
  asked = asked + 1 -- whatever still arrives for it is dropped
  if stopping.request_id then
    client.cancel_request(stopping.client, stopping.request_id)
  end
  render.write(stopping.buf, render.render_message(stopping.question, "Cancelled.", "WarningMsg"))
  vim.api.nvim_echo({ { "codecite: cancelled" } }, true, {})
end

---@return integer? the window the last question was asked from
function M.origin_win()
  return M.last and M.last.origin_win
end

--- Selected code appended to a question at most (characters), as in the VS Code extension.
local SELECTION_LIMIT = 4000
local TEXT_LIMIT = 100000 -- the server's MAX_TEXT_CHARS

--- The question sent for a selection: its text and place go along with what was asked.
local function selection_params(lsp_client, question, range)
  local bufnr = vim.api.nvim_get_current_buf()
  local params = { question = question }
  local lines = vim.api.nvim_buf_get_lines(bufnr, range.line1 - 1, range.line2, false)
  local name = vim.fs.normalize(vim.api.nvim_buf_get_name(bufnr))
  local root = vim.fs.normalize(client.root(lsp_client))
  local inside = vim.bo[bufnr].buftype == "" and vim.startswith(name, root .. "/")
  -- As in VS Code: the selected text (capped) follows the question so retrieval matches on it;
  -- its place goes as uri + position, not as words the offline answerer would look for.
  local selected = vim.fn.strcharpart(table.concat(lines, "\n"), 0, SELECTION_LIMIT)
  params.question = question .. "\n\n" .. selected
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
  -- A pasted file is cut here, at the server's bound for free text (core/limits.py
  -- MAX_TEXT_CHARS): the server cuts it further and says so, where beyond it it would refuse.
  params.question = vim.fn.strcharpart(params.question, 0, TEXT_LIMIT)
  local root = client.root(lsp_client)
  M.conversation = conversation.turns(root)
  if #M.conversation > 0 then
    params.history = vim.list_slice(M.conversation, math.max(1, #M.conversation - TURNS_SENT + 1))
  end
  asked = asked + 1
  local ticket = asked
  params.workDoneToken = "codecite-nvim-ask-" .. ticket
  -- Verified streaming: the server sends each span here once it has passed every check.
  params.partialResultToken = progress.PARTIAL_TOKEN .. ticket
  local origin_win = vim.api.nvim_get_current_win()
  local buf = render.buffer()
  M.last = nil -- the buffer no longer shows the previous answer: <CR> must not open its lines
  if pending then
    pending.stop() -- a question asked over another: the older one's claims are not drawn
  end
  pending = {
    ticket = ticket,
    client = lsp_client,
    token = params.workDoneToken,
    question = question,
    buf = buf,
    root = root,
    origin_win = origin_win,
    stop = progress.listen_partial(params.partialResultToken, function(value)
      preview(ticket, value)
    end),
  }
  draw_pending()
  render.show()
  local _, request_id = client.request(lsp_client, "codecite/ask", params, function(err, result)
    if ticket ~= asked then
      return
    end
    pending.stop() -- the answer replaces every preview: a late snapshot is not drawn
    pending = nil
    vim.api.nvim_echo({ { "" } }, false, {}) -- the stage ("verifying citations…") is over: clear it
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
      local rendered = render.render(question, result, wording, {
        line_at = render.file_lines(root),
        debug = config.options.debug,
      })
      render.write(buf, rendered)
      if result.continued ~= true then
        conversation.clear(root) -- the server found nothing in common: this starts a new one
      end
      conversation.add(root, { question = question, answer = result })
      M.conversation = conversation.turns(root)
      M.last = {
        question = question,
        answer = result,
        client_id = lsp_client.id,
        root = root,
        origin_win = origin_win,
        targets = rendered.targets,
      }
    end)
  end, bufnr)
  if pending and pending.ticket == ticket then
    pending.request_id = request_id
  end
end

--- <CR>/gd in the answer buffer: open the citation (through the server) or retrieved place under
--- the cursor.
function M.open_under_cursor()
  local last = M.last or (pending and pending.shown) -- a claim verified before the answer came
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
