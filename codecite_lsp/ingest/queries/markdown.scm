; Headings for codecite's markdown sections. The chunker reads the level from the marker
; (atx_h1_marker .. atx_h6_marker, setext_h1_underline / setext_h2_underline) and the title
; from heading_content; a section runs to the next heading of the same or a higher level.

(atx_heading) @heading
(setext_heading) @heading
