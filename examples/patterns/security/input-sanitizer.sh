#!/bin/sh
# Reads {"text": ..., "maxLength": ...} on stdin; python3 does the JSON.
exec python3 -c '
import json, re, sys
a = json.load(sys.stdin)
text = a.get("text", "")
clean = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", text)
clean = re.sub(r"\s+", " ", clean).strip()[: int(a.get("maxLength", 500))]
print(json.dumps({"text": clean, "removed": len(text) - len(clean)}))
'
