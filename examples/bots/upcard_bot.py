#!/usr/bin/env python3
"""A bot for `gops arena`: one JSON request per line on stdin, one reply per line on
stdout (docs/reference/bot-protocol.md). It bids the card nearest the upcard, mixing in
the card one above it a quarter of the time. Copy it into any language."""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    hand, upcard = request["hand"], request["upcard"]
    near = min(hand, key=lambda c: (abs(c - upcard), c))
    above = min(hand, key=lambda c: (abs(c - upcard - 1), c))
    if near == above:
        reply = {"bid": near}
    else:
        reply = {"distribution": {str(near): 0.75, str(above): 0.25}}
    print(json.dumps(reply), flush=True)
