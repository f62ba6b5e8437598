#!/usr/bin/env python3
# fake_otlp.py - A FAKE OTLP profiles receiver, for tests only: no
# OpenTelemetry collector with the (alpha) profiles signal can run on this
# machine, so this stands in for its OTLP/HTTP endpoint. It checks each
# export against the OTLP/HTTP specification (POST /v1development/profiles,
# Content-Type application/x-protobuf, optional Content-Encoding gzip) and
# has Debian's `protoc --decode` read the body against
# otlp_profiles.proto (written in the tests from opentelemetry-proto
# v1.11.0); then it checks the dictionary rules of profiles.proto and
# resolves every sample's stack into function names.
#
#   fake_otlp.py PORTFILE OUTDIR [PORT [MODE]]
#
# MODE: "ok" (default) answers 200 with an empty ExportProfilesServiceResponse;
# with "busy2" in it the first 2 exports get 503 and Retry-After: 1
# (retryable); with "partial" in it the first export answered 200 gets
# partial_success {rejected_profiles: 1, error_message: "fake: too old"}.
# For every export it appends one JSON line to OUTDIR/exports.jsonl:
# {"n", "status", "errors": [...], "resources": [{"attrs": {...},
#  "profiles": [{"type", "unit", "time", "duration", "period", "samples",
#  "total", "stacks": {"leaf;...;root": value}, "frame_types": [...],
#  "sample_attrs": [...]}]}]}.
import gzip
import json
import os
import re
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

portfile, outdir = sys.argv[1], sys.argv[2]
port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
mode = sys.argv[4] if len(sys.argv) > 4 else "ok"
os.makedirs(outdir, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))
PROTO = "otlp_profiles.proto"
state = {"n": 0, "partial_sent": False}

TOKEN = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s*(:?)\s*(\{)?|(\})|'
                   r'"((?:[^"\\]|\\.)*)"|([-0-9.eE+]+|true|false|[A-Z_]+))')


def parse_text(text):
    """protoc's text format -> {field: [values]} (messages are dicts)."""
    stack = [{}]
    pos = 0
    key = None
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError("text format at %d: %r" % (pos, text[pos:pos + 40]))
        pos = m.end()
        name, colon, brace, close, string, scalar = m.groups()
        if close:
            stack.pop()
        elif name and brace:
            d = {}
            stack[-1].setdefault(name, []).append(d)
            stack.append(d)
        elif name and colon:
            key = name
        elif string is not None:
            b = string.encode("latin-1").decode("unicode_escape").encode("latin-1")
            stack[-1].setdefault(key, []).append(b)
        elif scalar is not None:
            v = int(scalar) if re.fullmatch(r"-?\d+", scalar) else scalar
            stack[-1].setdefault(key, []).append(v)
        else:
            raise ValueError("text format at %d" % pos)
    return stack[0]


def one(d, k, default=0):
    v = d.get(k)
    return v[0] if v else default


def check(body, errs):
    p = subprocess.run(["protoc", "-I", here,
                        "--decode=rtdtest.otlp.ExportProfilesServiceRequest",
                        PROTO], input=body, capture_output=True)
    if p.returncode != 0:
        errs.append("protoc --decode: %s" % p.stderr.decode(errors="replace")[:300])
        return []
    req = parse_text(p.stdout.decode("latin-1"))
    dic = one(req, "dictionary", None)
    if dic is None:
        errs.append("no dictionary")
        return []
    strs = [s.decode("utf-8", "replace") for s in dic.get("string_table", [])]
    tables = {t: dic.get(t, []) for t in ("mapping_table", "location_table",
                                          "function_table", "link_table",
                                          "attribute_table", "stack_table")}
    # profiles.proto: index 0 of every table is present and its zero value
    if not strs or strs[0] != "":
        errs.append("string_table[0] is not \"\"")
    if len(set(strs)) != len(strs):
        errs.append("a string twice in string_table")
    for t, rows in tables.items():
        if not rows:
            errs.append("%s[0] missing" % t)
        elif t == "link_table":
            z = rows[0]
            if z and (one(z, "trace_id", b"\0" * 16) != b"\0" * 16 or
                      one(z, "span_id", b"\0" * 8) != b"\0" * 8):
                errs.append("link_table[0] is not the zero link")
        elif rows[0]:
            errs.append("%s[0] is not the zero value: %r" % (t, rows[0]))

    def s(i):
        if not 0 <= i < len(strs):
            errs.append("string index %d out of range" % i)
            return "?"
        return strs[i]

    def row(t, i):
        if not 0 < i < len(tables[t]):
            errs.append("%s index %d out of range" % (t, i))
            return {}
        return tables[t][i]

    def attr(i):
        a = row("attribute_table", i)
        v = one(a, "value", {})
        val = one(v, "string_value", None)
        val = val.decode() if val is not None else one(v, "int_value", None)
        return s(one(a, "key_strindex")), val

    out = []
    for rp in req.get("resource_profiles", []):
        res = one(rp, "resource", {})
        attrs = {}
        for kv in res.get("attributes", []):
            v = one(kv, "value", {})
            val = one(v, "string_value", None)
            attrs[one(kv, "key", b"").decode()] = (val.decode() if val is not None
                                                   else one(v, "int_value", None))
        profs = []
        for sp in rp.get("scope_profiles", []):
            scope = one(sp, "scope", {})
            if one(scope, "name", b"") == b"":
                errs.append("scope without a name")
            for pr in sp.get("profiles", []):
                st = one(pr, "sample_type", {})
                stacks, types, sattrs, total = {}, set(), set(), 0
                for smp in pr.get("samples", []):
                    vals = smp.get("values", [])
                    if len(vals) != 1:
                        errs.append("a sample with %d values" % len(vals))
                        continue
                    total += vals[0]
                    names = []
                    stk = row("stack_table", one(smp, "stack_index"))
                    for li in stk.get("location_indices", []):
                        loc = row("location_table", li)
                        mi = one(loc, "mapping_index")
                        if mi:
                            row("mapping_table", mi)
                        for ai in loc.get("attribute_indices", []):
                            k, v = attr(ai)
                            if k == "profile.frame.type":
                                types.add(v)
                        for ln in loc.get("lines", []):
                            fn = row("function_table", one(ln, "function_index"))
                            names.append(s(one(fn, "name_strindex")))
                    key = ";".join(names)
                    stacks[key] = stacks.get(key, 0) + vals[0]
                    keys = []
                    for ai in smp.get("attribute_indices", []):
                        k, v = attr(ai)
                        keys.append(k)
                        sattrs.add(k)
                    if len(keys) != len(set(keys)):
                        errs.append("a sample with an attribute key twice")
                profs.append({"type": s(one(st, "type_strindex")),
                              "unit": s(one(st, "unit_strindex")),
                              "time": one(pr, "time_unix_nano"),
                              "duration": one(pr, "duration_nano"),
                              "period": one(pr, "period"),
                              "samples": len(pr.get("samples", [])),
                              "total": total, "stacks": stacks,
                              "frame_types": sorted(types),
                              "sample_attrs": sorted(sattrs)})
        out.append({"attrs": attrs, "profiles": profs})
    return out


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        state["n"] += 1
        k = state["n"]
        errs = []
        if self.path != "/v1development/profiles":
            errs.append("path %s is not /v1development/profiles" % self.path)
        if self.headers.get("Content-Type") != "application/x-protobuf":
            errs.append("Content-Type %r" % self.headers.get("Content-Type"))
        enc = self.headers.get("Content-Encoding")
        if enc == "gzip":
            try:
                body = gzip.decompress(body)
            except Exception as e:
                errs.append("gzip: %s" % e)
        elif enc:
            errs.append("Content-Encoding %r" % enc)
        res = check(body, errs) if not errs else []
        status, extra, answer = 200, {}, b""
        if errs:
            status, answer = 400, ("; ".join(errs)).encode()
        elif "busy2" in mode and k <= 2:
            status, extra = 503, {"Retry-After": "1"}
        elif "partial" in mode and not state["partial_sent"]:
            state["partial_sent"] = True
            msg = b"fake: too old"
            inner = b"\x08\x01\x12" + bytes([len(msg)]) + msg
            answer = b"\x0a" + bytes([len(inner)]) + inner
        rec = {"n": k, "status": status, "errors": errs, "resources": res}
        with open(os.path.join(outdir, "exports.jsonl"), "a") as f:
            f.write(json.dumps(rec) + "\n")
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        for h, v in extra.items():
            self.send_header(h, v)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_GET(self):
        self.send_response(405)
        self.end_headers()


srv = HTTPServer(("127.0.0.1", port), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
