#!/usr/bin/env python3
"""Reads a foldsweep journal the way a user's Python does (issue #26 item 9).

    journal_lines.py JOURNAL

Every line must be one JSON object for json.loads, strictly (no NaN or
Infinity tokens, no key twice), whose last member is "crc": the CRC-32 of
the line's bytes before ,"crc": as 8 lowercase hex digits, checked here with
zlib.crc32 as docs/reliability.md ("The journal's lines") tells a user to.
Then pandas.read_json(JOURNAL, lines=True) where pandas is installed. Prints
what it checked; exit 0, or 1 naming the first bad line and what is wrong.
"""
import json
import sys
import zlib

TAIL = b',"crc":"'


def no_twice(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("a key appears twice")
    return pairs  # kept as a list: the order of the members is checked


def no_constant(name):
    raise ValueError(f"{name} is not JSON")


def check_line(raw):
    """What is wrong with one line (bytes, no newline), or None; and its kind."""
    try:
        pairs = json.loads(raw.decode("utf-8"), object_pairs_hook=no_twice, parse_constant=no_constant)
    except (UnicodeDecodeError, ValueError) as e:
        return f"not JSON: {e}", None
    if not isinstance(pairs, list) or not pairs:
        return "not a JSON object", None
    key, value = pairs[-1]
    if key != "crc" or not isinstance(value, str):
        return f'the last member is "{key}", not "crc"', None
    at = raw.rfind(TAIL)
    head = raw[:at]
    if raw != head + TAIL + value.encode() + b'"}':
        return 'the "crc" member is not written as ,"crc":"XXXXXXXX"}', None
    got = f"{zlib.crc32(head):08x}"
    if value != got:
        return f"crc {value}, but the bytes before it give {got}", None
    return None, dict(pairs).get("kind")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    path = sys.argv[1]
    with open(path, "rb") as f:
        data = f.read()
    if not data.endswith(b"\n"):
        print(f"{path}: the last line has no newline", file=sys.stderr)
        return 1
    lines = data[:-1].split(b"\n")
    kinds = {}
    for no, raw in enumerate(lines, 1):
        why, kind = check_line(raw)
        if why:
            print(f"{path}:{no}: {why}", file=sys.stderr)
            return 1
        kinds[kind] = kinds.get(kind, 0) + 1
    shown = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    print(f"python json: {len(lines)} lines, each one object ending in its checked crc ({shown})")
    try:
        import pandas
    except ImportError:
        print("pandas is not installed: read_json(lines=True) not tried")
        return 0
    frame = pandas.read_json(path, lines=True)
    if len(frame) != len(lines) or "crc" not in frame.columns or "kind" not in frame.columns:
        print(f"pandas: {len(frame)} rows, columns {list(frame.columns)}", file=sys.stderr)
        return 1
    print(f"pandas read_json(lines=True): {len(frame)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
