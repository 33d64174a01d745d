#!/usr/bin/env bash
# Checks that the page of `kiln inspect --graph FILE.html` renders in a browser: compiles the
# bundled squeezenet1_1 (or takes an artifact), writes the HTML page, loads it in headless
# Chromium, and checks
#   - the DOM Chromium built (--dump-dom) holds the inline <svg> with the graph, a dispatch
#     (kernel name, fused ops) and the arena plan;
#   - a screenshot (--screenshot) is not blank (its pixels take many values, not one colour).
#   scripts/check_graph_render.sh [KILN] [ARTIFACT]
# KILN defaults to build/bin/kiln. Needs Graphviz's `dot` (scripts/install-deps.sh) and
# `chromium` (or `chromium-browser`, or $CHROMIUM); without Chromium it skips visibly (exit
# 77, as the other check scripts). Exit status 1 when the page does not render.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=${1:-$root/build/bin/kiln}
artifact=${2:-}
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
  echo "check_graph_render: SKIPPED: chromium is not installed (set CHROMIUM=/path/to/chromium)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$artifact" ]; then
  artifact=$tmp/sq.kiln
  "$kiln" compile "$root/models/squeezenet1_1.onnx" -o "$artifact" --target vulkan > /dev/null ||
    exit 1
fi
"$kiln" inspect "$artifact" --graph "$tmp/graph.html" > /dev/null || exit 1
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile")
timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$tmp/graph.html" > "$tmp/dom.html" \
  2> "$tmp/chromium.log"
timeout 120 "$chromium" "${flags[@]}" --window-size=1600,1200 --screenshot="$tmp/shot.png" \
  "file://$tmp/graph.html" >> "$tmp/chromium.log" 2>&1
/usr/bin/python3 - "$tmp/dom.html" "$tmp/shot.png" <<'PY' || { cat "$tmp/chromium.log"; exit 1; }
import re, struct, sys, zlib

dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
problems = []
if not re.search(r"<svg[^>]*>", dom):
    problems.append("the DOM has no <svg> element")
if 'class="graph"' not in dom:
    problems.append("the <svg> holds no Graphviz graph group")
if not re.search(r"kiln\.conv", dom):
    problems.append("no dispatch with fused ops (kiln.conv) in the DOM")
if "arena plan" not in dom:
    problems.append("no arena plan table in the DOM")

try:
    png = open(sys.argv[2], "rb").read()
except OSError:
    png = b""
if png[:8] != b"\x89PNG\r\n\x1a\n":
    problems.append("no PNG screenshot")
else:
    # The IDAT data, decompressed: filter bytes and all; a blank page gives a handful of values.
    pos, idat = 8, b""
    while pos + 8 <= len(png):
        n, kind = struct.unpack(">I4s", png[pos:pos + 8])
        if kind == b"IDAT":
            idat += png[pos + 8:pos + 8 + n]
        pos += 12 + n
    values = len(set(zlib.decompress(idat))) if idat else 0
    if values < 16:
        problems.append(f"the screenshot looks blank ({values} distinct byte values)")
for p in problems:
    print("check_graph_render: FAIL:", p)
if problems:
    sys.exit(1)
print("check_graph_render: OK: the graph page rendered (svg in the DOM, non-blank screenshot)")
PY
