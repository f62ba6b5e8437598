#!/usr/bin/env python3
# fake_pyroscope.py - A FAKE Pyroscope server, for tests only: no Pyroscope
# server can run on this machine, so this receiver stands in for its
# ingest endpoint. It checks each upload against Pyroscope's documented
# HTTP API ("Pyroscope server HTTP API", Ingestion, pprof format and
# Sample Type Configuration) and keeps what it got; it stores nothing else
# and answers nothing else.
#
#   fake_pyroscope.py PORTFILE OUTDIR [PORT]
#
# Listens on 127.0.0.1:PORT (0: any free port, written to PORTFILE). For
# every POST /ingest it writes OUTDIR/N.pprof (the profile form file) and
# appends one JSON line to OUTDIR/uploads.jsonl: {"n", "name", "from",
# "until", "sample_types", "errors": [...]}; a request that breaks the
# documented form gets 400 and its errors recorded.
import email.parser
import email.policy
import json
import os
import re
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

portfile, outdir = sys.argv[1], sys.argv[2]
port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
os.makedirs(outdir, exist_ok=True)
count = [len([f for f in os.listdir(outdir) if f.endswith(".pprof")])]

# name: an application name, then optional {key=value,...}
NAME = re.compile(r'^[A-Za-z0-9_.\-]+(\{([A-Za-z_][A-Za-z0-9_.]*=[^{},=]*'
                  r'(,[A-Za-z_][A-Za-z0-9_.]*=[^{},=]*)*)?\})?$')
# the documented units, and those the server's own code defines for Go's
# mutex/block profiles and for .NET exceptions
UNITS = {"samples", "objects", "bytes", "lock_samples", "lock_nanoseconds",
         "goroutines", "exceptions"}


def check(handler, body):
    errs = []
    u = urllib.parse.urlsplit(handler.path)
    if u.path != "/ingest":
        errs.append("path %s is not /ingest" % u.path)
    q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
    one = {}
    for k, v in q.items():
        if len(v) != 1:
            errs.append("query %s given %d times" % (k, len(v)))
        one[k] = v[0]
    for k in ("name", "from", "until"):
        if k not in one:
            errs.append("query %s missing (required)" % k)
    if "name" in one and not NAME.match(one["name"]):
        errs.append("name %r is not app{k=v,...}" % one["name"])
    try:
        f, t = int(one.get("from", "x")), int(one.get("until", "x"))
        if not (1e9 < f <= t < 1e10):
            errs.append("from %d / until %d are not UNIX seconds in order" % (f, t))
    except ValueError:
        errs.append("from/until not integers")
    if one.get("format") != "pprof":
        errs.append("format %r is not pprof" % one.get("format"))
    ctype = handler.headers.get("Content-Type", "")
    if not ctype.startswith("multipart/form-data") or "boundary=" not in ctype:
        errs.append("Content-Type %r is not multipart/form-data" % ctype)
        return one, None, None, errs
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
    parts = {}
    for p in msg.iter_parts():
        cd = p.get("Content-Disposition", "")
        if not cd.startswith("form-data"):
            errs.append("part without form-data disposition")
            continue
        name = p.get_param("name", header="content-disposition")
        fname = p.get_param("filename", header="content-disposition")
        if name in parts:
            errs.append("form field %s twice" % name)
        parts[name] = (fname, p.get_payload(decode=True))
    for need in ("profile", "sample_type_config"):
        if need not in parts:
            errs.append("form file field %s missing" % need)
        elif not parts[need][0]:
            errs.append("form field %s is not a file field (no filename)" % need)
    extra = set(parts) - {"profile", "sample_type_config", "prev_profile"}
    if extra:
        errs.append("unknown form fields %s" % sorted(extra))
    prof = parts.get("profile", (None, None))[1]
    if prof is not None and not prof.startswith(b"\x1f\x8b"):
        errs.append("profile is not gzip-compressed pprof")
    stc = None
    if "sample_type_config" in parts:
        try:
            stc = json.loads(parts["sample_type_config"][1])
            assert isinstance(stc, dict) and stc, "not a JSON object"
            for k, v in stc.items():
                assert set(v) <= {"units", "aggregation", "display-name",
                                  "sampled", "cumulative"}, "fields %s" % sorted(v)
                assert v.get("units", "samples") in UNITS, "units %r" % v.get("units")
                assert v.get("aggregation", "sum") in ("sum", "average"), \
                    "aggregation %r" % v.get("aggregation")
                assert isinstance(v.get("sampled", False), bool), "sampled"
                assert isinstance(v.get("display-name", ""), str), "display-name"
        except Exception as e:  # noqa: BLE001 - any shape error is reported
            errs.append("sample_type_config: %s" % e)
    return one, prof, stc, errs


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        one, prof, stc, errs = check(self, body)
        count[0] += 1
        k = count[0]
        if prof is not None:
            with open(os.path.join(outdir, "%d.pprof" % k), "wb") as f:
                f.write(prof)
        rec = {"n": k, "name": one.get("name"), "from": one.get("from"),
               "until": one.get("until"),
               "sample_types": sorted(stc) if stc else [],
               "display": sorted(v.get("display-name", "") if isinstance(v, dict)
                                 else "" for v in stc.values())
               if isinstance(stc, dict) else [], "errors": errs}
        with open(os.path.join(outdir, "uploads.jsonl"), "a") as f:
            f.write(json.dumps(rec) + "\n")
        self.send_response(400 if errs else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


HTTPServer.allow_reuse_address = True
srv = HTTPServer(("127.0.0.1", port), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
