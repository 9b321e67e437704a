-- The answer buffer `codecite://answer`: renders an Answer (docs/contracts.md) as plain lines and
-- remembers which line belongs to which citation, so <CR>/gd can open it.
local M = {}

M.BUFNAME = "codecite://answer"

local ns = vim.api.nvim_create_namespace("codecite_answer")

--- JSON null arrives as vim.NIL: treat it like a missing field.
---@param value any
---@return boolean
local function present(value)
  return value ~= nil and value ~= vim.NIL
end

--- `path:L10-14`, or `path:L10` for one line: the form hover and the VS Code chat use too.
---@param item {path: string, start_line: integer, end_line: integer}
---@return string
function M.place(item)
  local lines = item.start_line == item.end_line and ("L%d"):format(item.start_line)
    or ("L%d-%d"):format(item.start_line, item.end_line)
  return item.path .. ":" .. lines
end

--- Where a past answer's citation points now (codecite/history resolves it): nothing when it is
--- unchanged or not resolved (a fresh answer), else the same words as the VS Code chat's badges.
---@param resolution codecite.Resolution?
---@return string
local function resolution_note(resolution)
  if type(resolution) ~= "table" or resolution.state == "exact" then
    return ""
  elseif resolution.state == "moved" then
    local now = { path = "", start_line = resolution.start_line, end_line = resolution.end_line }
    return (" (moved to %s)"):format(M.place(now):sub(2))
  end
  return resolution.state == "stale" and " (changed)" or " (gone)"
end

--- The refusal sentence and labels from the server's wording (codecite/wording); without it
--- (an older server) the reason code itself, which still tells a user what happened.
---@param wording codecite.Wording?
---@param reason string
---@return string headline, string closest
local function refusal_words(wording, reason)
  local reasons = wording and wording.reasons or {}
  local labels = wording and wording.labels or {}
  local said = reasons[reason] or labels.unknown_reason or tostring(reason)
  return ("%s: %s"):format(labels.no_answer or "No answer", said),
    labels.closest or "Closest places in the repository"
end

---@param text string
---@return string[]
local function split(text)
  return vim.split(text, "\n", { plain = true })
end

--- A quote's lines, without blank edges, dedented as a block. A quote starts at its first word,
--- so its first line lost the indentation the others kept: `line_at(citation)` (the cited file's
--- first line, when readable) gives it back before the common indentation is removed.
---@param citation {quote: string}
---@param line_at? fun(citation: table): string?
---@return string[]
local function quote_lines(citation, line_at)
  local lines = split((citation.quote:gsub("^\n+", ""):gsub("\n+$", "")))
  local in_file = line_at and line_at(citation)
  local first = vim.trim(lines[1])
  if type(in_file) == "string" and first ~= "" and vim.endswith(vim.trim(in_file), first) then
    lines[1] = in_file:match("^%s*") .. (lines[1]:gsub("^%s+", ""))
  end
  local common
  for _, line in ipairs(lines) do
    if line:find("%S") then
      local indent = #line:match("^%s*")
      common = common and math.min(common, indent) or indent
    end
  end
  if common and common > 0 then
    for i, line in ipairs(lines) do
      lines[i] = line:sub(common + 1)
    end
  end
  return lines
end

--- The cited file's first cited line: from its buffer when loaded (what the user sees), else
--- from disk; nil when neither can be read.
---@param root string
---@return fun(citation: table): string?
function M.file_lines(root)
  return function(citation)
    local path = vim.fs.joinpath(root, citation.path)
    local buf = vim.fn.bufnr(path)
    if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
      return vim.api.nvim_buf_get_lines(buf, citation.start_line - 1, citation.start_line, false)[1]
    end
    local ok, lines = pcall(vim.fn.readfile, path, "", citation.start_line)
    return ok and lines[citation.start_line] or nil
  end
end

--- One rendered answer: its lines, highlights, and what each line opens.
---@class codecite.Rendered
---@field lines string[]
---@field targets table<integer, {kind: "citation"|"retrieved", item: table}>
---@field highlights {line: integer, group: string}[]

--- Lines for an answer or a refusal (pure: no buffer touched).
---@param question string
---@param answer codecite.Answer
---@param wording? codecite.Wording the server's codecite/wording reply
---@param opts? {line_at?: fun(citation: table): string?, debug?: boolean, arriving?: string}
--- line_at: the cited file's first cited line (quotes are indented as in the file); debug: show
--- the trace id; arriving: the last line, under spans verified so far while the rest is awaited
---@return codecite.Rendered
function M.render(question, answer, wording, opts)
  opts = opts or {}
  local out = { lines = {}, targets = {}, highlights = {} }
  local function add(line, group, target)
    table.insert(out.lines, line)
    if group then
      table.insert(out.highlights, { line = #out.lines, group = group })
    end
    if target then
      out.targets[#out.lines] = target
    end
  end
  add("Q: " .. split(question)[1], "Title")
  if answer.continued == true then
    add("(continues the conversation; :CodeciteNew starts a new one)", "Comment")
  end
  add("")
  if answer.status == "refused" then
    local headline, closest = refusal_words(wording, answer.reason)
    add(headline, "WarningMsg")
    if present(answer.detail) and answer.detail ~= "" then
      for _, line in ipairs(split(answer.detail)) do
        add(line)
      end
    end
    if present(answer.retrieved) and #answer.retrieved > 0 then
      add("")
      add(closest .. " (<CR> opens):")
      for _, ref in ipairs(answer.retrieved) do
        add("  " .. M.place(ref), "Directory", { kind = "retrieved", item = ref })
      end
    end
  else
    for _, span in ipairs(answer.spans or {}) do
      -- Any other kind (prose, or one this plugin does not know yet) reads as plain prose.
      if span.kind == "claim" then
        local text = split(span.text)
        add("- " .. text[1])
        for i = 2, #text do
          add("  " .. text[i])
        end
        for _, citation in ipairs(span.citations or {}) do
          local target = { kind = "citation", item = citation }
          local where = M.place(citation) .. resolution_note(citation.resolution)
          add("  " .. where, "Directory", target)
          for _, line in ipairs(quote_lines(citation, opts.line_at)) do
            add("      " .. line, "Comment", target)
          end
        end
      elseif type(span.text) == "string" then
        for _, line in ipairs(split(span.text)) do
          add(line)
        end
      end
      add("")
    end
    if present(answer.note) and answer.note ~= "" then
      add("(note: " .. answer.note .. ")", "Comment")
    end
    if opts.arriving then
      add(opts.arriving, "Comment")
    end
  end
  if opts.debug and present(answer.trace_id) and answer.trace_id ~= "" then
    add("")
    add("trace " .. answer.trace_id, "NonText") -- the server's trace.jsonl record of this answer
  end
  return out
end

--- A question with a one-line message instead of an answer (waiting, or the request failed).
---@param question string
---@param message string
---@param group? string
---@return codecite.Rendered
function M.render_message(question, message, group)
  local lines = { "Q: " .. split(question)[1], "", message }
  local highlights = { { line = 1, group = "Title" } }
  if group then
    table.insert(highlights, { line = 3, group = group })
  end
  return { lines = lines, targets = {}, highlights = highlights }
end

--- The answer buffer, created on first use and reused afterwards.
---@return integer
function M.buffer()
  local buf = vim.fn.bufnr(M.BUFNAME)
  if buf ~= -1 and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, M.BUFNAME)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "codecite"
  -- Answer text is Markdown (`code`, **bold**): Neovim's bundled markdown parser highlights it and,
  -- with 'conceallevel', hides the markup, as the VS Code chat renders it. Only highlighting: the
  -- buffer's text stays exactly what the server sent.
  pcall(vim.treesitter.start, buf, "markdown")
  return buf
end

local function is_code_window(win)
  local buf = vim.api.nvim_win_get_buf(win)
  return vim.api.nvim_win_get_config(win).relative == "" and vim.bo[buf].buftype == ""
end

--- Make a normal file window current: `origin` (the window the question was asked from),
--- another file window of this tab, or a new split above the answer.
---@param origin? integer
function M.focus_code_window(origin)
  if is_code_window(vim.api.nvim_get_current_win()) then
    return
  end
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

--- Show the answer buffer in a split at the bottom (or the window already showing it).
---@return integer window
function M.show()
  local buf = M.buffer()
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_set_current_win(win)
      return win
    end
  end
  vim.cmd("botright split")
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].number = false
  vim.wo[win].conceallevel = 2
  return win
end

---@param buf integer
---@param rendered codecite.Rendered
function M.write(buf, rendered)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, rendered.lines)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, mark in ipairs(rendered.highlights) do
    local text = rendered.lines[mark.line]
    vim.api.nvim_buf_set_extmark(buf, ns, mark.line - 1, 0, {
      end_col = #text,
      hl_group = mark.group,
    })
  end
end

--- How fresh a root's index is, in words: the server's last_update is an ISO time or seconds
--- since the epoch, and missing before the first complete pass.
---@param last any
---@return string
local function freshness(last)
  if not present(last) or last == "" then
    return "never indexed"
  end
  if type(last) == "number" then
    return "indexed " .. os.date("%Y-%m-%d %H:%M", math.floor(last))
  end
  return "indexed " .. tostring(last):gsub("T", " "):gsub("%.%d+", "")
end

--- One line per workspace folder of a codecite/status reply: what the index holds and whether
--- it can be trusted now (failed, indexing, files pending, or when it was last brought up to date).
---@param status codecite.StatusReply
---@return string[]
function M.status_lines(status)
  local lines = {}
  for _, root in ipairs(status.roots or {}) do
    local pending = root.pending or 0
    local state
    if present(root.error) then
      state = "failed: " .. tostring(root.error)
    elseif root.indexing then
      state = pending > 0 and ("indexing, %d pending"):format(pending) or "indexing"
    elseif pending > 0 then
      state = ("%d pending"):format(pending)
    else
      state = freshness(root.last_update)
    end
    local embedder = present(root.embedder) and root.embedder or {}
    local uses = present(embedder.name)
        and ("; embedder %s (%s)"):format(embedder.name, tostring(embedder.state))
      or ""
    local meaning = present(root.meaning) and root.meaning or {}
    if present(meaning.state) and meaning.state ~= "off" then
      uses = uses
        .. ("; semantic search %s (%d vectors)"):format(tostring(meaning.state), meaning.vectors or 0)
    end
    table.insert(
      lines,
      ("%s: %d files, %d chunks; %s%s"):format(
        root.root,
        root.files_indexed or 0,
        root.chunks or 0,
        state,
        uses
      )
    )
  end
  if #lines == 0 then
    table.insert(lines, "no workspace folder is open")
  end
  return lines
end

--- Quickfix items for the citations of an answer (empty for a refusal).
---@param answer table
---@param root string
---@return table[]
function M.quickfix_items(answer, root)
  local items = {}
  if answer.status ~= "answered" then
    return items
  end
  for _, span in ipairs(answer.spans or {}) do
    for _, citation in ipairs(span.kind == "claim" and span.citations or {}) do
      table.insert(items, {
        filename = vim.fs.joinpath(root, citation.path),
        lnum = citation.start_line,
        end_lnum = citation.end_line,
        col = 1,
        text = vim.trim(quote_lines(citation)[1]),
      })
    end
  end
  return items
end

return M
