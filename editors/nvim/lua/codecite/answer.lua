-- The answer buffer `codecite://answer`: renders an Answer (contracts.md) as plain lines and
-- remembers which line belongs to which citation, so <CR>/gd can open it.
local M = {}

M.BUFNAME = "codecite://answer"

-- Same words as the CLI and hover (codecite_lsp/render.py), so users meet one vocabulary.
M.REASONS = {
  no_span_in_retrieval = "Nothing in the indexed code answers this question.",
  unverified_citation = "The model's answer cited lines that could not be verified, so it was withheld.",
  ambiguous = "The question matches several unrelated places; please make it more specific.",
  stale_index = "The index is out of date for the files involved; re-index and ask again.",
  model_error = "The model gave no usable answer.",
}

local ns = vim.api.nvim_create_namespace("codecite_answer")

--- JSON null arrives as vim.NIL: treat it like a missing field.
---@param value any
---@return boolean
local function present(value)
  return value ~= nil and value ~= vim.NIL
end
M.present = present

---@param item {path: string, start_line: integer, end_line: integer}
---@return string
function M.where(item)
  return ("%s:%d-%d"):format(item.path, item.start_line, item.end_line)
end

---@param text string
---@return string[]
local function split(text)
  return vim.split(text, "\n", { plain = true })
end

--- A quote's lines as written (the gate keeps indentation), without blank edges.
---@param quote string
---@return string[]
local function quote_lines(quote)
  return split((quote:gsub("^\n+", ""):gsub("\n+$", "")))
end

--- One rendered answer: its lines, highlights, and what each line opens.
---@class codecite.Rendered
---@field lines string[]
---@field targets table<integer, {kind: "citation"|"retrieved", item: table}>
---@field highlights {line: integer, group: string}[]

--- Lines for an answer or a refusal (pure: no buffer touched).
---@param question string
---@param answer table
---@return codecite.Rendered
function M.render(question, answer)
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
  add("")
  if answer.status == "refused" then
    add("No answer: " .. (M.REASONS[answer.reason] or tostring(answer.reason)), "WarningMsg")
    if present(answer.detail) and answer.detail ~= "" then
      for _, line in ipairs(split(answer.detail)) do
        add(line)
      end
    end
    if present(answer.retrieved) and #answer.retrieved > 0 then
      add("")
      add("Closest places in the repository (<CR> opens):")
      for _, ref in ipairs(answer.retrieved) do
        add("  " .. M.where(ref), "Directory", { kind = "retrieved", item = ref })
      end
    end
  else
    for _, span in ipairs(answer.spans or {}) do
      if span.kind == "claim" then
        local text = split(span.text)
        add("- " .. text[1])
        for i = 2, #text do
          add("  " .. text[i])
        end
        for _, citation in ipairs(span.citations or {}) do
          local target = { kind = "citation", item = citation }
          add("  " .. M.where(citation), "Directory", target)
          for _, line in ipairs(quote_lines(citation.quote)) do
            add("      " .. line, "Comment", target)
          end
        end
      else
        for _, line in ipairs(split(span.text)) do
          add(line)
        end
      end
      add("")
    end
    if present(answer.note) and answer.note ~= "" then
      add("(note: " .. answer.note .. ")", "Comment")
    end
  end
  if present(answer.trace_id) then
    add("")
    add("trace " .. answer.trace_id, "NonText")
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
  return buf
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
  vim.wo[win].number = false
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
        text = vim.trim(quote_lines(citation.quote)[1]),
      })
    end
  end
  return items
end

return M
