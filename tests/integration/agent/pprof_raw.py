"""pprof_raw.py - `go tool pprof -raw` output of a block/mutex profile, read
by the agent tests (imported: PYTHONPATH=tests/integration/agent).

parse(path) -> Raw with
  samples  [(contentions, delay_ns, [location ids])]
  locs     {id: the location's text: its first frame "M=n FUNC FILE:LINE ..."
            and an inlined frame's lines appended}
  funcs    {id: the first frame's function}
  duration the profile's Duration in seconds (0 if none)
  period   the PeriodType line ("" if none)
and delay_in(pred) / count_in(pred): the samples whose stack has a location
whose text satisfies pred. Checks that the sample types are Go's block
profile's (contentions/count, delay/nanoseconds).
"""
import re


class Raw:
    def __init__(self, samples, locs, funcs, duration, period):
        self.samples, self.locs, self.funcs = samples, locs, funcs
        self.duration, self.period = duration, period

    def _hit(self, ids, pred):
        return any(pred(self.locs.get(x, ""), self.funcs.get(x)) for x in ids)

    def delay_in(self, pred):
        return sum(v for c, v, ids in self.samples if self._hit(ids, pred))

    def count_in(self, pred):
        return sum(c for c, v, ids in self.samples if self._hit(ids, pred))


def parse(path):
    raw = open(path).read().splitlines()
    i = raw.index("Samples:")
    assert raw[i + 1].replace("[dflt]", "").split() == ["contentions/count", "delay/nanoseconds"], raw[i + 1]
    dur = [float(l.split()[1]) for l in raw if l.startswith("Duration:")]
    period = next((l for l in raw if l.startswith("PeriodType:")), "")
    samples, locs, funcs, sect, cur = [], {}, {}, "samples", None
    for l in raw[i + 2:]:
        if l.startswith("Locations"):
            sect = "locs"
            continue
        if l.startswith("Mappings"):
            break
        if sect == "samples":
            m = re.match(r"^\s+(\d+)\s+(\d+):\s*([\d ]*)$", l)
            if m:
                samples.append((int(m[1]), int(m[2]), [int(x) for x in m[3].split()]))
            continue
        m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ (.*)$", l)
        if m:
            cur = int(m[1])
            locs[cur] = m[2]
            f = re.match(r"M=\d+ (\S+)", m[2])
            funcs[cur] = f[1] if f else None
        elif cur is not None:
            locs[cur] += " " + l.strip()  # an inlined frame's line
    return Raw(samples, locs, funcs, dur[0] if dur else 0, period)
