-- :CodeciteHistory: past answers of every conversation (codecite/history, newest first), listed
-- with vim.ui.select one page at a time; the chosen one opens in the answer buffer, read-only
-- (it does not join the conversation a follow-up continues), each citation marked with where it
-- points now (moved, changed, gone).
local client = require("codecite.client")
local render = require("codecite.render")

local M = {}

M.PAGE_SIZE = 20 -- entries asked for per page; the next page only when the user wants it
M.LOAD_MORE = "Load older answers…"
local QUESTION_CHARS = 100 -- a list row is one line

--- "just now", "5 min ago", "3 h ago", "2 days ago" from an ISO time; "" when unreadable.
---@param time any
---@param now integer seconds since the epoch (UTC)
---@return string
function M.age(time, now)
  if type(time) ~= "string" then
    return ""
  end
  local y, mo, d, h, mi, s = time:match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return ""
  end
  -- os.time reads a table as local time; "!*t" of 0 gives the offset to undo that.
  local fields = { year = y, month = mo, day = d, hour = h, min = mi, sec = s, isdst = false }
  local epoch = os.time(fields) - os.time(os.date("!*t", 0) --[[@as osdateparam]])
  local minutes = math.floor(math.max(0, now - epoch) / 60)
  if minutes < 1 then
    return "just now"
  elseif minutes < 60 then
    return ("%d min ago"):format(minutes)
  elseif minutes < 24 * 60 then
    return ("%d h ago"):format(math.floor(minutes / 60))
  end
  local days = math.floor(minutes / (24 * 60))
  return days == 1 and "1 day ago" or ("%d days ago"):format(days)
end

--- The path of the first citation (a refusal: its closest place), or nil.
local function first_path(answer)
  if answer.status == "refused" then
    local retrieved = type(answer.retrieved) == "table" and answer.retrieved or {}
    return retrieved[1] and ("closest: " .. retrieved[1].path) or nil
  end
  for _, span in ipairs(answer.spans or {}) do
    if span.kind == "claim" and type(span.citations) == "table" and span.citations[1] then
      return span.citations[1].path
    end
  end
end

--- One row of the list: question · answered/refused · age · first cited path.
---@param entry codecite.HistoryRecord
---@param now integer
---@return string
function M.label(entry, now)
  local question = vim.trim((entry.question:gsub("%s+", " ")))
  if vim.fn.strchars(question) > QUESTION_CHARS then
    question = vim.fn.strcharpart(question, 0, QUESTION_CHARS - 1) .. "…"
  end
  local parts = { question, entry.answer.status == "answered" and "answered" or "refused" }
  local when = M.age(entry.time, now)
  if when ~= "" then
    table.insert(parts, when)
  end
  table.insert(parts, first_path(entry.answer))
  return table.concat(parts, " · ")
end

--- The stored answer with each citation's current resolution attached (entries list them in the
--- order the claims cite them).
---@param entry codecite.HistoryRecord
---@return codecite.Answer
function M.resolved_answer(entry)
  local answer = vim.deepcopy(entry.answer)
  if answer.status ~= "answered" then
    return answer
  end
  local resolved = type(entry.citations) == "table" and entry.citations or {}
  local next_one = 1
  for _, span in ipairs(answer.spans or {}) do
    if span.kind == "claim" then
      for i, citation in ipairs(span.citations or {}) do
        local match = resolved[next_one]
        next_one = next_one + 1
        if type(match) == "table" and match.citation and match.citation.path == citation.path then
          -- A fresh table: one citation may be cited by two claims, each resolved on its own.
          span.citations[i] = vim.tbl_extend("force", citation, { resolution = match.resolution })
        end
      end
    end
  end
  return answer
end

local function is_entry(entry)
  return type(entry) == "table"
    and type(entry.question) == "string"
    and type(entry.answer) == "table"
    and type(entry.answer.status) == "string"
end

--- Opens `entry` in the answer buffer; <CR> on a citation opens it through the server, which
--- resolves it against the files as they are now.
---@param lsp_client vim.lsp.Client
---@param entry codecite.HistoryRecord
---@param origin_win integer
function M.show(lsp_client, entry, origin_win)
  local answer = M.resolved_answer(entry)
  client.wording(lsp_client, function(wording)
    local root = type(entry.root) == "string" and entry.root or client.root(lsp_client)
    local rendered = render.render(entry.question, answer, wording, {
      line_at = render.file_lines(root),
      debug = require("codecite.config").options.debug,
    })
    local when = M.age(entry.time, os.time())
    local heading = "Past answer" .. (when ~= "" and (" · " .. when) or "") .. " (read-only)"
    table.insert(rendered.lines, 1, heading)
    local targets = {}
    for lnum, target in pairs(rendered.targets) do
      targets[lnum + 1] = target
    end
    for _, mark in ipairs(rendered.highlights) do
      mark.line = mark.line + 1
    end
    table.insert(rendered.highlights, 1, { line = 1, group = "Comment" })
    rendered.targets = targets
    render.write(render.buffer(), rendered)
    render.show()
    require("codecite.commands").last = {
      question = entry.question,
      answer = answer,
      client_id = lsp_client.id,
      root = root,
      origin_win = origin_win,
      targets = targets,
    }
  end)
end

--- :CodeciteHistory
function M.pick()
  local lsp_client = client.get_or_explain()
  if not lsp_client then
    return
  end
  local origin_win = vim.api.nvim_get_current_win()
  local entries, offset = {}, 0
  local function load()
    local params = { limit = M.PAGE_SIZE, offset = offset }
    client.request(lsp_client, "codecite/history", params, function(err, result)
      if err then
        client.say("reading past answers failed: " .. err.message, vim.log.levels.ERROR)
        return
      end
      local page = type(result) == "table" and (result.entries or result) or {}
      offset = offset + #page
      for _, entry in ipairs(page) do
        if is_entry(entry) then
          table.insert(entries, entry)
        end
      end
      local more = #page >= M.PAGE_SIZE -- a short page is the last one
      if #entries == 0 and not more then
        client.say("no past answers yet")
        return
      end
      local choices = vim.list_extend({}, entries)
      if more then
        table.insert(choices, M.LOAD_MORE)
      end
      local now = os.time()
      vim.ui.select(choices, {
        prompt = "codecite: past answers",
        format_item = function(item)
          return item == M.LOAD_MORE and item or M.label(item, now)
        end,
      }, function(choice)
        if choice == M.LOAD_MORE then
          load()
        elseif choice then
          M.show(lsp_client, choice, origin_win)
        end
      end)
    end)
  end
  load()
end

return M
