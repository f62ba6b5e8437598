#!/usr/bin/env bash
# The one-way data flow of STYLE.md and docs/design.md (issue #29), as far
# as the includes show it. Each rule is first tried on a made-up tree (what
# it must find, what it must let pass), so a pattern that matches nothing
# cannot pass for a clean tree.
#
# models: the models (src/profile, src/timeline) consume records and
#   include nothing from any source: no other module's private header but
#   src/common's, and of the public headers only the record stream's and
#   the models' own (rtdiag/{common,source,format,profile,profile_records,
#   timeline,timeline_records,firefox}.h).
# model_headers: the models' public headers include only rtdiag/common.h,
#   source.h, profile.h and timeline.h, and name no source's function or
#   type (rtd_nettrace_, rtd_gotrace_, rtd_perf_, rtd_ipc_, ...) outside
#   their comments.
# private: a module's private helpers stay in its folder; only src/common
#   is shared. A file of src/X includes no src/Y/... header (Y neither X
#   nor common). One edge is allowed: src/dotnet's gcdump (gcheap.c) reads
#   the GC's bulk events by the runtime's event ids, and those ids are one
#   generated table, src/nettrace/clr_ids.h (gen_schema.py), for both .NET
#   modules. Four edges were removed with this rule: record/source.c took
#   perf/source_impl.h for rtd_source_impl_of() (now public, source.h),
#   dotnet's session source nettrace/nt.h for rtd_nettrace_source_live()
#   (now public, nettrace_source.h), gcheap.c nettrace/nt.h for the UTF-16
#   reader (now rtd_rd_utf16z() in src/common), and perf/profiler.c
#   included symbols/internal.h for nothing.
# case_numbers: a switch names what it tells apart (STYLE.md: "never
#   `case 22:` with the name in a comment"): no numeric case label in src/
#   or tools/, but where the number is the value itself: a count
#   (src/gotrace/analysis_run.c's copy_args) and Go's trace versions
#   (src/gotrace/v2spec.c: 1022 is Go 1.22's header). The runtime's event
#   ids have their own rule (unit nettrace test_schema_table). The last
#   ones named with this rule: NetTrace V6's thread-info, label and
#   optional-metadata kinds (nettrace decoder.c, metadata.c), protobuf wire
#   types (profile/read.c: pbw.h's PB_*), Go's GoStatus (public
#   enum rtd_go_status), the perf sources' steps (psrc_step), the agent's
#   per-target metric families (a table of named value functions), and the
#   Go versions the decoder and the encoder know (one gtd_version_known(),
#   was the same 12-case list twice).
set -u
S=${RTD_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
INC='^[[:space:]]*#[[:space:]]*include[[:space:]]*"'
# the same after grep's "FILE:LINE:"
INCF=':[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]*"'
scan_models() { # ROOT
	(cd "$1" && grep -rnE --include='*.c' --include='*.h' "$INC" src/profile src/timeline 2>/dev/null |
		grep -vE "$INCF"'(common|profile|timeline)/' |
		grep -vE "$INCF"'rtdiag/(common|source|format|profile|profile_records|timeline|timeline_records|firefox)\.h"')
}
MODEL_HEADERS='profile profile_records timeline timeline_records format firefox'
scan_model_headers() { # ROOT
	local h
	for h in $MODEL_HEADERS; do
		[ -f "$1/include/rtdiag/$h.h" ] || continue
		(cd "$1" && grep -nHE "$INC" "include/rtdiag/$h.h" |
			grep -vE "$INCF"'rtdiag/(common|source|profile|timeline)\.h"')
		# outside comments: inline /* ... */ cut, comment lines dropped
		(cd "$1" && sed -E 's#/\*.*\*/##; s#^([[:space:]]*)(/\*|\*).*#\1#' "include/rtdiag/$h.h" |
			grep -nE '\brtd_(nettrace|gotrace|go|perf|ipc|gcheap|agent|counters|sym)[a-z0-9]*_' |
			sed "s#^#include/rtdiag/$h.h:#")
	done
}
scan_private() { # ROOT
	(cd "$1" && grep -rnE --include='*.c' --include='*.h' "$INC"'[a-z0-9_]+/' src 2>/dev/null |
		grep -vE "$INCF"'(rtdiag|common)/' |
		awk -F: '{ split($1, p, "/"); m = $0; sub(/^[^"]*"/, "", m); split(m, q, "/");
			   if (p[2] != q[1]) print }' |
		grep -vE '^src/dotnet/gcheap\.c:[0-9]+:#include "nettrace/clr_ids\.h"')
}
scan_case_numbers() { # ROOT
	(cd "$1" && grep -rnE --include='*.c' --include='*.h' '\bcase[[:space:]]+(0[xX][0-9a-fA-F]+|[0-9]+)[[:space:]]*:' src tools 2>/dev/null |
		grep -vE '^src/gotrace/(analysis_run|v2spec)\.c:' |
		awk '{ t = $0; sub(/^[^:]*:[0-9]*:/, "", t); gsub(/\/\*.*\*\//, "", t); sub(/\/\/.*/, "", t)
		       if (t ~ /(^|[^A-Za-z0-9_])case[ \t]+(0[xX][0-9a-fA-F]+|[0-9]+)[ \t]*:/) print }')
}
. "$(dirname "$0")/rules.sh"
mk src/profile/a.c '#include "nettrace/nt.h"'
mk src/profile/b.c '#include "rtdiag/perf_profiler.h"'
mk src/timeline/c.c '#  include "rtdiag/gotrace.h"'
mk src/timeline/d.c '#include "rtdiag/timeline_records.h"
#include "timeline/int.h"
#include "common/buf.h"'
mk src/profile/e.c '#include "rtdiag/source.h"
#include <rtdiag/stdio.h>
/* #include "perf/x.h" is how it was */'
check models "src/profile/a.c src/profile/b.c src/timeline/c.c" "src/timeline/d.c src/profile/e.c" \
	"a model includes a source: take records (rtdiag/source.h) instead"
mk include/rtdiag/profile.h '#include "rtdiag/perf.h"'
mk include/rtdiag/timeline.h 'struct x { rtd_nettrace_event *e; };'
mk include/rtdiag/format.h '/* not rtd_perf_profiler_new(): a comment */
 * rtd_gotrace_open() is named in a comment line
#include "rtdiag/profile.h"
int rtd_format_x(void); /* rtd_ipc_client too */'
check model_headers "include/rtdiag/profile.h include/rtdiag/timeline.h" "include/rtdiag/format.h" \
	"a model's header names a source"
mk src/record/source.c '#include "perf/source_impl.h"'
mk src/dotnet/x.c '#include "nettrace/nt.h"'
mk src/dotnet/gcheap.c '#include "nettrace/clr_ids.h"'
mk src/perf/y.c '#include "perf/bpf/offcpu_maps.h"
#include "common/map.h"
#include "rtdiag/perf.h"'
mk src/perf/z.c '#include "symbols/internal.h"'
check private "src/record/source.c src/dotnet/x.c src/perf/z.c" "src/dotnet/gcheap.c src/perf/y.c" \
	"a module includes another's private header: only src/common is shared"
mk src/nettrace/decoder.c '			case 1: /* name */'
mk tools/rtdiag/x.c '	case 0x7f: break;'
mk src/x/y.c 'switch (n) { case  12 : break; }'
mk src/gotrace/v2spec.c '	case 1022:'
mk src/x/z.c '	case NT_THREAD_NAME: /* 1 */
	case RTD_GO_STATUS_RUNNABLE: break; /* case 2: */'
check case_numbers "src/nettrace/decoder.c tools/rtdiag/x.c src/x/y.c" "src/gotrace/v2spec.c src/x/z.c" \
	"a numeric case label: name the value (an enum, or a table of named handlers)"
exit $fail
