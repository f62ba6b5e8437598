#!/bin/bash
# test_symbols.sh - the record stream's objects (src/record, the sources'
# adapters and the src/common helpers they added) define no global symbol
# without the rtd_ prefix, in librtdiag.a and librtdiag.so alike (issue
# #29: an unprefixed name collides in a user's static link), and the .so
# exports every public function of rtdiag/source.h and the source headers.
set -u
B=${RTD_BINARY_DIR:?RTD_BINARY_DIR not set}
S=${RTD_SOURCE_DIR:?RTD_SOURCE_DIR not set}
command -v nm >/dev/null || { echo "SKIP: nm not found"; exit 77; }
O=$B/CMakeFiles/rtdiag_obj.dir/src
objs=()
for f in record/record.c record/intern.c record/source.c common/arena.c common/input.c \
	 common/recq.c nettrace/source.c gotrace/source.c perf/source.c perf/source_waits.c \
	 timeline/records.c; do
	[ -f "$O/$f.o" ] || { echo "FAIL: $O/$f.o not built"; exit 1; }
	objs+=("$O/$f.o")
done
fail=0
bad=$(nm -g --defined-only "${objs[@]}" | awk 'NF == 3 { print $3 }' | grep -v '^rtd_' | sort -u)
if [ -n "$bad" ]; then
	echo "FAIL: global symbols without the rtd_ prefix:"; echo "$bad"; fail=1
else
	echo "ok: every global symbol of the ${#objs[@]} objects starts with rtd_"
fi
so=$(ls "$B"/librtdiag.so 2>/dev/null)
[ -n "$so" ] || { echo "FAIL: librtdiag.so not built"; exit 1; }
exports=$(nm -D --defined-only "$so" | awk '{ print $3 }')
for h in source.h nettrace_source.h gotrace_source.h perf_source.h; do
	for fn in $(grep -oE '^RTD_API [^(]*\b(rtd_[a-z0-9_]+)\(' "$S/include/rtdiag/$h" |
		    grep -oE 'rtd_[a-z0-9_]+\($' | tr -d '('); do
		grep -qx "$fn" <<<"$exports" || { echo "FAIL: $fn (rtdiag/$h) not exported"; fail=1; }
	done
done
# the helpers stay inside the .so
for fn in rtd_arena_alloc rtd_input_setup rtd_recq_push; do
	grep -qx "$fn" <<<"$exports" && { echo "FAIL: internal $fn exported"; fail=1; }
done
[ $fail -eq 0 ] && echo "ok: the .so exports the public API of the four headers, not the helpers"
exit $fail
