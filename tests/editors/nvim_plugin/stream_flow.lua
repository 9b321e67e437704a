-- Verified streaming in the answer buffer: a model (litellm's mock, streamed) writes three claims;
-- each snapshot the server sends on the ask's partialResultToken is drawn before the answer
-- comes, and <CR> on a cited line of a claim still arriving opens that line. Then a reply with a
-- claim that fails: the stricter retry's claims replace what the first attempt showed.
local here = debug.getinfo(1, "S").source:sub(2)
local T = dofile(vim.fs.joinpath(vim.fs.dirname(here), "common.lua"))

T.run(function()
  local client = require("codecite.client")
  local progress = require("codecite.progress")
  -- In order: what the buffer showed after each snapshot was drawn, then the answer's arrival.
  local events = {}
  T.report.events = events
  T.report.sent = {}
  T.report.opened = {}
  local send = client.request
  client.request = function(lsp_client, method, params, handler, ...)
    if method == "codecite/ask" then
      table.insert(T.report.sent, vim.deepcopy(params))
      local answered = handler
      handler = function(err, result, ...)
        table.insert(events, { kind = "answer", last_was_nil = require("codecite").last == nil })
        return answered(err, result, ...)
      end
    elseif method == "workspace/executeCommand" then
      table.insert(T.report.opened, vim.deepcopy(params))
    end
    return send(lsp_client, method, params, handler, ...)
  end
  -- Wrapped before setup(): the client's handler table is built from it then.
  local handle = progress.handler
  local pressed = false
  progress.handler = function(err, params, ctx, cfg)
    local result = handle(err, params, ctx, cfg)
    if vim.startswith(tostring(params.token), progress.PARTIAL_TOKEN) then
      local lines = T.lines(T.answer_buf())
      table.insert(events, {
        kind = "snapshot",
        attempt = params.value.attempt,
        spans = #params.value.spans,
        lines = lines,
        answer_shown = require("codecite").last ~= nil,
      })
      local cited
      for i, line in ipairs(lines) do
        if line:find("^  keyvault/ratelimit%.py:L") then
          cited = i
        end
      end
      if cited and not pressed then -- the user opens a claim's lines before the answer is done
        pressed = true
        T.report.pressed = { line = lines[cited], answer_shown = require("codecite").last ~= nil }
        T.press_in_answer(cited, "<CR>")
      end
    end
    return result
  end

  T.setup({})
  T.open_and_index("keyvault/ratelimit.py")
  local asked = T.ask("CodeciteAsk How does the token bucket refill?")
  T.report.answer = asked
  local place = T.report.pressed and T.report.pressed.line:match("L(%d+)")
  if place then
    T.report.at = T.wait_at("keyvault/ratelimit.py", tonumber(place))
  end

  -- The same question alone again (no follow-up rewrite asks the model): the retry's reply.
  vim.cmd("CodeciteNew")
  events = {}
  T.report.retry_events = events
  T.report.retry = T.ask("CodeciteAsk How does the token bucket refill?")
end)
