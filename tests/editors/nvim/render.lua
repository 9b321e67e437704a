-- Pure rendering of the plugin (no server): prints a JSON report of what the answer buffer and
-- :CodeciteStatus would show for given replies. Run by tests/editors/test_nvim_render.py.
local render = require("codecite.render")
local wording = vim.json.decode(assert(os.getenv("CODECITE_WORDING")))
local citation = { path = "keyvault/keys.py", start_line = 47, end_line = 48, quote = "def rotate_key():\n    pass" }
local report = {
  answered = render.render("How?", {
    status = "answered",
    spans = {
      { kind = "prose", text = "Rotation happens in `keyvault/keys.py`:" },
      { kind = "claim", text = "`rotate_key` issues a new key.", citations = { citation } },
      { kind = "gap", text = "The sources do not show storage at rest." },
    },
  }, wording).lines,
  refused = render.render("Billing?", {
    status = "refused",
    reason = "stale_index",
    detail = "",
    retrieved = { { path = "a.py", start_line = 3, end_line = 3, score = 0.2 } },
  }, wording).lines,
  unknown_reason = render.render("?", { status = "refused", reason = "new_reason", detail = "" }, wording).lines,
  without_wording = render.render("?", { status = "refused", reason = "ambiguous", detail = "" }, nil).lines,
  -- Claims verified so far, while the rest of the answer is awaited: the same lines, then the stage.
  arriving = (function()
    local preview = { status = "answered", spans = { { kind = "claim", text = "Rotates.", citations = { citation } } } }
    return {
      plain = render.render("How?", preview, wording).lines,
      marked = render.render("How?", preview, wording, { arriving = "Asking the model… (:CodeciteCancel to stop)" }).lines,
    }
  end)(),
  -- A past answer (codecite/history): each citation carries where it points now.
  past = (function()
    local past = require("codecite.past")
    local entry = {
      question = "Where?",
      time = "2026-11-28T12:00:00Z",
      answer = {
        status = "answered",
        spans = {
          { kind = "claim", text = "Moved.", citations = { citation } },
          { kind = "claim", text = "Changed and gone.", citations = { citation, citation } },
        },
      },
      citations = {
        { citation = citation, resolution = { state = "moved", start_line = 50, end_line = 51 } },
        { citation = citation, resolution = { state = "stale", reason = "edited" } },
        { citation = citation, resolution = { state = "gone", reason = "deleted" } },
      },
    }
    local now = os.time({ year = 2026, month = 11, day = 30, hour = 13, min = 0, sec = 0 })
    return {
      label = past.label(entry, now),
      lines = render.render(entry.question, past.resolved_answer(entry), wording).lines,
    }
  end)(),
  -- A quote starting mid-function: its first line lost the indentation the file gives it.
  indented = render.render("How?", {
    status = "answered",
    spans = {
      {
        kind = "claim",
        text = "It waits.",
        citations = {
          { path = "k.py", start_line = 10, end_line = 12, quote = "if ready:\n            go()\n        else:" },
        },
      },
    },
  }, wording, {
    line_at = function(c)
      return c.path == "k.py" and c.start_line == 10 and "        if ready:" or nil
    end,
  }).lines,
  traced = render.render("How?", { status = "answered", trace_id = "abc123", spans = {} }, wording).lines,
  traced_debug = render.render(
    "How?",
    { status = "answered", trace_id = "abc123", spans = {} },
    wording,
    { debug = true }
  ).lines,
  continued = render.render("Where?", { status = "answered", continued = true, spans = {} }, wording).lines,
  standalone = render.render("Where?", { status = "answered", continued = false, spans = {} }, wording).lines,
  status = render.status_lines({
    roots = {
      { root = "/fresh", files_indexed = 4, chunks = 9, pending = 0, indexing = false, last_update = 1764523880 },
      { root = "/running", files_indexed = 2, chunks = 3, pending = 5, indexing = true },
      { root = "/stale", files_indexed = 4, chunks = 9, pending = 2, indexing = false, last_update = vim.NIL },
      { root = "/new", files_indexed = 0, chunks = 0, pending = 0, indexing = false, last_update = vim.NIL },
      { root = "/broken", files_indexed = 0, chunks = 0, pending = 0, error = "permission denied" },
    },
  }),
}
io.stdout:write(vim.json.encode(report))
