"""What an answer says of where its lines are, found on gin, gson and axum: sources merged from
neighbouring chunks say, line by line, whose lines they are (a call in ``ServeHTTP`` was labelled
"Used in gin.go (Engine.handleHTTPRequest)"); a hover quotes a long doc comment's summary; the
statements inside a function of a brace language can be quoted; a method header without a
keyword encloses its body for the gate."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from codecite_lsp.core.records import (
    Result,
    Source,
    content_hash,
    outside_source,
    sources_from_results,
)
from codecite_lsp.ingest.chunking import chunk_text
from codecite_lsp.offline.hover import hover_answer
from codecite_lsp.retrieve.selection import line_range, merge_adjacent
from codecite_lsp.verify.gate import GateFailed, GatePassed, verify

ENGINE = """package gin

// ServeHTTP conforms to the http.Handler interface.
func (engine *Engine) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	c := engine.pool.Get().(*Context)
	c.reset()
	engine.handleHTTPRequest(c)
	engine.pool.Put(c)
}

// HandleContext re-enters a context that has been rewritten.
func (engine *Engine) HandleContext(c *Context) {
	c.reset()
	engine.handleHTTPRequest(c)
}

func (engine *Engine) handleHTTPRequest(c *Context) {
	httpMethod := c.Request.Method
	rPath := c.Request.URL.Path
	unescape := false
	if engine.UseEscapedPath {
		rPath = c.Request.URL.EscapedPath()
		unescape = engine.UnescapePathValues
	}
	t := engine.trees
	for i, tl := 0, len(t); i < tl; i++ {
		if t[i].method != httpMethod {
			continue
		}
		root := t[i].root
		value := root.getValue(rPath, c.params, c.skippedNodes, unescape)
		if value.handlers != nil {
			c.handlers = value.handlers
			c.Next()
			return
		}
	}
	serveError(c, http.StatusNotFound, default404Body)
}
"""

CLIENT_IP = """package gin

func (c *Context) RemoteIP() string {
	return c.Request.RemoteAddr
}

// ClientIP implements one best effort algorithm to return the real client IP.
// It calls c.RemoteIP() under the hood, to check if the remote IP is a trusted proxy or not.
// If it is it will then try to parse the headers defined in Engine.RemoteIPHeaders.
// If the headers are not syntactically valid OR the remote IP does not correspond to a trusted
// proxy, the remote IP (coming from Request.RemoteAddr) is returned.
func (c *Context) ClientIP() string {
	return c.RemoteIP()
}
"""


def hover_sources(path: str, text: str, budget: int) -> list[Source]:
    """As hover retrieves them: the file's chunks, the definition's first, merged where they
    touch (retrieve_for_symbol)."""
    chunks = chunk_text(path, text, revision="r1", budget=budget)
    ordered = sorted(chunks, key=lambda c: c.symbol != "Engine.handleHTTPRequest")
    return sources_from_results(merge_adjacent([Result(c, 1.0) for c in ordered]))


def claims(raw: str) -> list[dict[str, Any]]:
    return [span for span in json.loads(raw)["spans"] if span["kind"] == "claim"]


def test_a_merged_source_knows_which_chunk_each_line_came_from() -> None:
    chunks = chunk_text("gin.go", ENGINE, revision="r1", budget=900)
    # The two small methods are one chunk without a symbol; handleHTTPRequest is its own.
    assert [(c.start_line, c.symbol) for c in chunks] == [
        (1, None),
        (17, "Engine.handleHTTPRequest"),
    ]
    [merged] = hover_sources("gin.go", ENGINE, 900)
    assert merged.result.chunk.symbol is None  # no one definition holds every line
    assert (
        merged.result.symbol_at(7) is None
        and merged.result.symbol_at(17) == "Engine.handleHTTPRequest"
    )
    assert merged.result.symbols_within(3, 20) == ["Engine.handleHTTPRequest"]


def test_a_hover_names_the_function_a_use_is_in_not_the_merged_neighbour() -> None:
    [merged] = hover_sources("gin.go", ENGINE, 900)
    raw = hover_answer("handleHTTPRequest", merged, [])
    uses = [c["text"] for c in claims(raw)[1:]]
    assert uses == ["Used in gin.go (ServeHTTP):"]
    assert isinstance(verify(raw, [merged]), GatePassed)


def test_the_gate_does_not_lend_a_merged_neighbours_name_to_the_cited_lines() -> None:
    [merged] = hover_sources("gin.go", ENGINE, 900)
    quote = "\tc.reset()\n\tengine.handleHTTPRequest(c)"
    reply = {
        "spans": [
            {
                "kind": "claim",
                "text": "`HandleContext` resets the context before it serves it again.",
                "citations": [{"source": "S1", "start_line": 13, "end_line": 14, "quote": quote}],
            },
            {
                "kind": "claim",
                "text": "`handleHTTPRequest` conforms to the http.Handler interface.",
                "citations": [
                    {
                        "source": "S1",
                        "start_line": 3,
                        "end_line": 3,
                        "quote": "conforms to the http.Handler interface.",
                    }
                ],
            },
        ],
        "refuse": None,
    }
    result = verify(json.dumps(reply), [merged])
    assert isinstance(result, GateFailed)
    assert [check.span_index for check in result.failures] == [1]
    assert "handleHTTPRequest" in result.failures[0].detail


def test_the_prompt_header_names_each_merged_chunks_lines() -> None:
    from codecite_lsp.answer.prompt import render_source

    [merged] = hover_sources("gin.go", ENGINE, 900)
    header = render_source(merged, "f").splitlines()[1]
    assert header == "[S1] gin.go:1-39 (17-39: Engine.handleHTTPRequest)"


def test_methods_of_one_class_merged_keep_the_class_and_a_cut_keeps_its_piece() -> None:
    text = "".join(f"line {n}\n" for n in range(1, 9))
    lines = text.splitlines(keepends=True)
    first = chunk_text("a.py", "x = 1\n", revision="r")[0]
    a = replace(first, start_line=1, end_line=4, text="".join(lines[:4]), symbol="Flask.a")
    b = replace(a, start_line=5, end_line=8, text="".join(lines[4:]), symbol="Flask.b")
    [merged] = merge_adjacent([Result(a, 0.9), Result(b, 0.5)])
    assert (merged.chunk.symbol, merged.pieces) == ("Flask", ((1, "Flask.a"), (5, "Flask.b")))
    assert merged.chunk.content_hash == content_hash(text)
    cut = line_range(merged, 6, 8)
    assert (cut.chunk.symbol, cut.pieces) == ("Flask.b", ())


def test_a_hover_quotes_the_summary_of_a_long_doc_comment_above_the_definition() -> None:
    [source] = sources_from_results(
        merge_adjacent([Result(c, 1.0) for c in chunk_text("context.go", CLIENT_IP, revision="r")])
    )
    raw = hover_answer("ClientIP", source, [])
    first = claims(raw)[0]
    assert first["text"] == (
        "`ClientIP` is defined in context.go: "
        "ClientIP implements one best effort algorithm to return the real client IP."
    )
    cited = [(c["start_line"], c["end_line"]) for c in first["citations"]]
    assert cited == [(7, 7), (12, 12)]  # the summary line and the signature
    assert isinstance(verify(raw, [source]), GatePassed)


def test_a_how_question_on_go_quotes_the_statements_inside_a_function() -> None:
    """A block's braces are not a call's: `log.Printf(...)` two levels inside `func` and `if`
    is a whole statement. Every line of a function's body in a brace language used to read as
    inside an open bracket, so an offline answer could quote only whole functions."""
    from codecite_lsp.offline.extractive import answer

    recovery = (
        "package gin\n"
        "\n"
        "func CustomRecoveryWithWriter(out io.Writer, handle RecoveryFunc) HandlerFunc {\n"
        "\treturn func(c *Context) {\n"
        "\t\tdefer func() {\n"
        "\t\t\tif rec := recover(); rec != nil {\n"
        '\t\t\t\tlogger.Printf("panic recovered: %s", rec)\n'
        "\t\t\t\thandle(c, rec)\n"
        "\t\t\t}\n"
        "\t\t}()\n"
        "\t\tc.Next()\n"
        "\t}\n"
        "}\n"
    )
    [source] = sources_from_results(
        [Result(c, 1.0) for c in chunk_text("recovery.go", recovery, revision="r")]
    )
    raw = answer("How is a panic recovered and logged?", [source])
    first = claims(raw)[0]
    assert first["text"] == "In `CustomRecoveryWithWriter` (recovery.go), line 7:"
    assert first["citations"][0]["quote"].strip() == 'logger.Printf("panic recovered: %s", rec)'
    assert isinstance(verify(raw, [source]), GatePassed)


def test_a_doc_comment_is_not_labelled_with_the_definition_that_ended_above_it() -> None:
    from codecite_lsp.offline.extractive import answer

    client = (
        "export class KeyvaultClient {\n"
        "  constructor(private readonly baseUrl: string) {}\n"
        "\n"
        "  /** Ask the server to rotate the caller's API key. */\n"
        "  async rotateKey(client: string): Promise<void> {\n"
        "    await fetch(`${this.baseUrl}/clients/${client}/rotate`);\n"
        "  }\n"
        "}\n"
    )
    source = outside_source("S1", "client.ts", 1, 8, client)
    raw = answer("Which function rotates API keys?", [source])
    texts = [claim["text"] for claim in claims(raw)]
    assert texts and not any("constructor" in text for text in texts)
    assert isinstance(verify(raw, [source]), GatePassed)


def test_the_gate_knows_a_method_header_without_a_keyword_encloses_its_body() -> None:
    """A claim may name the method whose body it quotes: Java's and TypeScript's methods have
    no `def` or `func` for the gate to see."""
    java = (
        "public final class Gson {\n"
        "  public boolean serializeNulls() {\n"
        "    return serializeNulls;\n"
        "  }\n"
        "}\n"
    )
    source = outside_source("S1", "Gson.java", 1, 5, java)
    reply = {
        "spans": [
            {
                "kind": "claim",
                "text": "`serializeNulls()` returns a `boolean`: the serializeNulls field.",
                "citations": [
                    {
                        "source": "S1",
                        "start_line": 3,
                        "end_line": 3,
                        "quote": "return serializeNulls;",
                    }
                ],
            },
            {
                "kind": "claim",
                "text": "`toJson` returns the serializeNulls field.",
                "citations": [
                    {
                        "source": "S1",
                        "start_line": 3,
                        "end_line": 3,
                        "quote": "return serializeNulls;",
                    }
                ],
            },
        ],
        "refuse": None,
    }
    result = verify(json.dumps(reply), [source])
    assert isinstance(result, GateFailed)
    assert [check.span_index for check in result.failures] == [1]  # toJson is named nowhere
