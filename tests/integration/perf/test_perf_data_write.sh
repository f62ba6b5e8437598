# perf.data written by rtdiag as a perf user reads it, beyond the samples
# test_perf_data.sh compares: a tracepoint recording (`rtdiag perf record
# --off-cpu -o x.data`, sched:sched_switch) carries the tracepoint's
# format (HEADER_TRACING_DATA), so perf script and perf report open it
# and decode each switch's fields (without it perf refuses the file:
# "broken or missing trace data", "incompatible file format"); and the
# header names the command line as typed (perf report --header).
. "$(dirname "$0")/lib.sh"
command -v perf >/dev/null || skip "perf (linux-perf) not installed: nothing to read rtdiag's files with"
W=$RTD_BINARY_DIR/tests/targets/offcpu_waits_fp
[ -x "$W" ] || fail "offcpu_waits not built"

"$R" perf record --off-cpu -o "$TMP/off.data" -o "$TMP/off.folded" -- "$W" > /dev/null 2> "$TMP/rec.err" \
  || { cat "$TMP/rec.err"; fail "rtdiag perf record --off-cpu -o x.data"; }
perf script -i "$TMP/off.data" -F comm,tid,event,trace > "$TMP/off.script" 2> "$TMP/script.err" \
  || { cat "$TMP/script.err"; fail "perf script cannot read rtdiag's --off-cpu perf.data"; }
"$R" convert "$TMP/off.data" -o "$TMP/off.json" || fail "rtdiag convert of its own file"
python3 - "$TMP/off.script" "$TMP/off.json" <<'PY' || fail "the switches perf script decodes are not rtdiag's"
import json, re, sys
perf = []
for line in open(sys.argv[1]):
    m = re.search(r"\s(\d+)\s+sched:sched_switch:\s+prev_comm=(.*) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=.* next_pid=(\d+)", line)
    assert m, "perf script: a line without sched_switch's decoded fields: " + line
    perf.append((int(m.group(3)), int(m.group(5))))
mine = [(e["args"]["prev_pid"], e["args"]["next_pid"])
        for e in json.load(open(sys.argv[2]))["traceEvents"] if e.get("name") == "sched:sched_switch"]
print("perf script: %d sched_switch samples with their fields; rtdiag: %d" % (len(perf), len(mine)))
assert perf and sorted(perf) == sorted(mine)
PY
ok "--off-cpu: perf script decodes every sched_switch of rtdiag's file, as rtdiag reads it"
grep -q 'off-CPU through perf, every switch copied out: a perf.data file holds each switch' "$TMP/rec.err" \
  || { cat "$TMP/rec.err"; fail "--off-cpu -o x.data: no line saying why the perf path"; }
"$R" perf record --off-cpu --off-cpu-via bpf -o "$TMP/b.data" -- true > /dev/null 2> "$TMP/b.err" && fail "--off-cpu-via bpf -o x.data accepted"
grep -q 'a perf.data file holds each switch' "$TMP/b.err" && [ ! -e "$TMP/b.data" ] \
  || { cat "$TMP/b.err"; fail "--off-cpu-via bpf -o x.data: message, or a file left"; }
ok "--off-cpu -o x.data takes the perf path and says why (BPF keeps totals: its file held no switch)"
# a perf.data with nothing to draw: said, nothing written (it was exit 1 and silence)
perf record -q -e dummy -o "$TMP/d.data" -- true 2> /dev/null
"$R" convert "$TMP/d.data" -o "$TMP/d.json" 2> "$TMP/d.err" && fail "convert of a dummy-only perf.data: exit 0"
grep -q 'nothing to draw' "$TMP/d.err" && [ ! -e "$TMP/d.json" ] \
  || { cat "$TMP/d.err"; fail "convert of a dummy-only perf.data: no message, or a file"; }
ok "convert of a perf.data with nothing to draw: $(head -1 "$TMP/d.err")"
perf report -i "$TMP/off.data" --stdio --no-children --sort sym 2> /dev/null | grep -q "Samples: [1-9][0-9]* *of event 'sched:sched_switch'" \
  || fail "perf report: no sched:sched_switch samples"
ok "perf report reads it"
cmd=$(perf report -i "$TMP/off.data" --header-only 2> /dev/null | sed -n 's/^# cmdline : \(.*[^ ]\) *$/\1/p')
[ "$cmd" = "rtdiag perf record --off-cpu -o $TMP/off.data -o $TMP/off.folded -- $W" ] || fail "header cmdline: '$cmd'"
ok "perf report --header: cmdline : $cmd"

# perf's --call-graph dwarf,SIZE: the stack bytes each sample copies, in
# the attr perf report shows
"$R" perf record --call-graph dwarf,16384 -F 499 -o "$TMP/dw.data" -- "$W" > /dev/null 2>&1 || fail "record --call-graph dwarf,16384"
perf report -i "$TMP/dw.data" --header-only 2> /dev/null | grep -q "sample_stack_user = 16384" \
  || fail "--call-graph dwarf,16384: $(perf report -i "$TMP/dw.data" --header-only 2>&1 | grep -o 'sample_stack_user = [0-9]*')"
ok "--call-graph dwarf,16384: sample_stack_user = 16384"

# pipe mode (perf record -o -): attributes, event names, features and
# tracepoint formats are records before the data. Read from a file and
# from standard input (perf record -o - | rtdiag convert -): every sample
# with perf script's stack, and sched_switch's fields from the formats
# the pipe carries
FP=$RTD_BINARY_DIR/tests/targets/cpu_shares_fp
CMP=$(dirname "$0")/perf_script_stacks.py
perf record -q -g -F 999 -o - -- "$FP" rounds=150 2> /dev/null | tee "$TMP/pipe.data" \
  | "$R" convert - --no-inline --type samples -f folded -o "$TMP/stdin.folded" || fail "perf record -o - | rtdiag convert -"
perf script -i "$TMP/pipe.data" -F tid,event,ip,sym --no-inline 2> /dev/null > "$TMP/pipe.script"
python3 "$CMP" "$TMP/pipe.script" "$TMP/stdin.folded" || fail "perf record -o - | rtdiag convert -: perf script and rtdiag differ"
"$R" convert "$TMP/pipe.data" --no-inline --type samples -f folded -o "$TMP/pipe.folded" || fail "rtdiag convert of a pipe-mode file"
cmp -s "$TMP/pipe.folded" "$TMP/stdin.folded" || fail "the pipe-mode file and the same bytes on standard input differ"
ok "pipe mode, a file and standard input: every sample as perf script has it"
perf record -q -g -e sched:sched_switch -o - -- sh -c 'for i in 1 2 3; do sleep 0.01; done' 2> /dev/null > "$TMP/sw.data"
"$R" convert "$TMP/sw.data" -o "$TMP/sw.json" || fail "rtdiag convert of a pipe-mode tracepoint recording"
python3 - "$TMP/sw.json" "$(perf script -i "$TMP/sw.data" -F event -G 2> /dev/null | grep -c "sched:sched_switch:")" <<'PY' || fail "pipe mode: sched_switch without its fields"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("name") == "sched:sched_switch"]
print("sched_switch: rtdiag %d, perf script %s" % (len(ev), sys.argv[2]))
assert ev and len(ev) == int(sys.argv[2]) and all("prev_state" in e["args"] for e in ev)
PY
ok "pipe mode: the tracepoint's name and fields from the formats in the stream"
"$R" convert - -o "$TMP/no.folded" < <(cat "$TMP/off.data") 2> "$TMP/err"; rc=$?
[ $rc = 1 ] && grep -q "give its file name" "$TMP/err" && [ ! -e "$TMP/no.folded" ] || { cat "$TMP/err"; fail "a seekable perf.data on a pipe: rc $rc"; }
ok "a perf.data of perf's seekable layout on a pipe: $(cat "$TMP/err")"

# the threads of a process already running: each named as it is (perf
# record's synthesized COMM records are), not by its process's name (they
# were all "python3" here: perf report's comm column wrong for every
# thread but the first)
mkfifo "$TMP/go"
python3 - "$TMP/go" > "$TMP/ready" <<'PY' &
import ctypes, ctypes.util, sys, threading
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
named = threading.Barrier(3)
def worker(name):
    libc.prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME
    named.wait()
    threading.Event().wait()
for n in ("alpha-worker", "beta-worker"):
    threading.Thread(target=worker, args=(n,), daemon=True).start()
named.wait()
print("ready", flush=True)
open(sys.argv[1]).read()  # until the test is done with it
PY
tp=$!
until grep -q ready "$TMP/ready"; do kill -0 $tp 2> /dev/null || fail "the named-threads program ended"; sleep 0.05; done
"$R" perf record -p $tp -d 0.2 -o "$TMP/thr.data" > /dev/null 2> "$TMP/thr.err" || { cat "$TMP/thr.err"; fail "perf record -p (named threads) -o x.data"; }
want=$(for t in /proc/$tp/task/*; do echo "${t##*/} $(cat $t/comm)"; done | sort)
echo > "$TMP/go"; wait $tp
got=$(perf script -i "$TMP/thr.data" --show-task-events 2> /dev/null \
  | sed -n 's/.*PERF_RECORD_COMM: \(.*\):[0-9]*\/\([0-9]*\)$/\2 \1/p' | sort -u)
[ "$got" = "$want" ] || fail "threads' COMM records: '$got', want '$want'"
ok "perf.data names each thread of a running process as it is: $(echo $got)"
