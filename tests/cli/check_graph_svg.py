# Checks the SVG of `kiln inspect --graph` (tests/cli/inspect_graph.test): well-formed XML with
# an <svg> root, every executable `kiln inspect` lists named in a dispatch box, the fused ops of
# a dispatch, the model's input and output, and the arena plan.
#   check_graph_svg.py GRAPH.svg INSPECT_OUTPUT.txt
import re
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()  # raises on malformed XML
assert root.tag == SVG + "svg", f"root element is {root.tag}, not svg"
texts = [t.text or "" for t in root.iter(SVG + "text")]
names = re.findall(r"^executable \d+: '([^']+)'", open(sys.argv[2]).read(), re.M)
assert names, "kiln inspect listed no executables"
missing = [n for n in names if not any(re.search(r"#\d+ " + re.escape(n) + r"$", t) for t in texts)]
assert not missing, f"dispatches missing from the SVG: {missing}"
for want in ["kiln.conv + kiln.relu", "input", "logits", "f32[1x3x224x224]", "arena plan"]:
    assert any(want in t for t in texts), f"no text '{want}' in the SVG"
edges = [g for g in root.iter(SVG + "g") if g.get("class") == "edge"]
assert len(edges) > len(names), f"only {len(edges)} edges"
print(f"ok: {len(names)} executables, {len(edges)} edges, {len(texts)} text elements")
