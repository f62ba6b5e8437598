// dotnet-kinds DIR rates - one instrument of each kind at known rates and
// values, for comparing 'rtdiag dotnet counters' with dotnet-counters on
// the same process (tests/integration/dotnet/test_counters_vs.sh).
//
// Every 100 ms (a tick; the loop keeps to the clock, not to sleeps):
// Meter "Rtdiag.Rates":
//   requests   Counter<long> "{request}": Add(7) a tick (70/s)
//   hits       Counter<long>, no unit, tag route: Add(1, route=/a) and
//              Add(2, route=/b) a tick (10/s, 20/s)
//   queue      UpDownCounter<long> "{item}": +3 then -2 a tick (its value,
//              counted from when a session began listening, grows 10/s)
//   bytes      ObservableCounter<long> "By": 50 per tick elapsed (500/s)
//   pending    ObservableUpDownCounter<long>: 17
//   temperature ObservableGauge<double> "Cel": 21.5
//   latency    Histogram<double> "ms": nine 5s and one 50 a tick
//              (P50 5, P95 and P99 50 whatever the interval holds)
// Meter "Rtdiag.Rates.Tagged" with the tag region=eu:
//   jobs       Counter<long> "{job}" with the tag queue=q1: Add(5) a tick
//              (50/s)
// EventSource "Rtdiag-Rates":
//   fixed      EventCounter "Fixed value" (B): WriteMetric(42) a tick
//   ticks      IncrementingEventCounter "Ticks": Increment(3) a tick
//   polled     PollingCounter "Polled value" (MB): 7.25
//   ipolled    IncrementingPollingCounter "Polled total": 4 per tick
// Writes DIR/ready (its pid); exits when DIR/stop exists.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using System.IO;
using System.Threading;

[EventSource(Name = "Rtdiag-Rates")]
sealed class RateSource : EventSource
{
    public static readonly RateSource Log = new RateSource();
    public EventCounter Fixed;
    public IncrementingEventCounter Ticks;
    PollingCounter polled;
    IncrementingPollingCounter ipolled;
    public static long PolledTotal;

    RateSource()
    {
        Fixed = new EventCounter("fixed", this) { DisplayName = "Fixed value", DisplayUnits = "B" };
        Ticks = new IncrementingEventCounter("ticks", this) { DisplayName = "Ticks", DisplayRateTimeScale = TimeSpan.FromSeconds(1) };
        polled = new PollingCounter("polled", this, () => 7.25) { DisplayName = "Polled value", DisplayUnits = "MB" };
        ipolled = new IncrementingPollingCounter("ipolled", this, () => Interlocked.Read(ref PolledTotal)) { DisplayName = "Polled total" };
    }
}

static class RatesProgram
{
    public static int Run(string dir)
    {
        var meter = new Meter("Rtdiag.Rates", "1.0");
        var requests = meter.CreateCounter<long>("requests", "{request}");
        var hits = meter.CreateCounter<long>("hits");
        var queue = meter.CreateUpDownCounter<long>("queue", "{item}");
        var latency = meter.CreateHistogram<double>("latency", "ms");
        var tagged = new Meter(new MeterOptions("Rtdiag.Rates.Tagged") {
            Version = "1.0", Tags = new[] { new KeyValuePair<string, object>("region", "eu") } });
        var jobs = tagged.CreateCounter<long>("jobs", "{job}", null,
            new[] { new KeyValuePair<string, object>("queue", "q1") });
        var clock = Stopwatch.StartNew();
        meter.CreateObservableCounter("bytes", () => clock.ElapsedMilliseconds / 100 * 50, "By");
        meter.CreateObservableUpDownCounter("pending", () => 17L);
        meter.CreateObservableGauge("temperature", () => 21.5, "Cel");
        _ = RateSource.Log;
        File.WriteAllText(Path.Combine(dir, "ready.tmp"), Environment.ProcessId.ToString());
        File.Move(Path.Combine(dir, "ready.tmp"), Path.Combine(dir, "ready"), true);
        string stop = Path.Combine(dir, "stop");
        var a = new KeyValuePair<string, object>("route", "/a");
        var b = new KeyValuePair<string, object>("route", "/b");
        for (long tick = 1; !File.Exists(stop); tick++) {
            requests.Add(7);
            jobs.Add(5);
            hits.Add(1, a);
            hits.Add(2, b);
            queue.Add(3);
            queue.Add(-2);
            for (int i = 0; i < 9; i++) latency.Record(5);
            latency.Record(50);
            RateSource.Log.Fixed.WriteMetric(42);
            RateSource.Log.Ticks.Increment(3);
            Interlocked.Add(ref RateSource.PolledTotal, 4);
            long wait = tick * 100 - clock.ElapsedMilliseconds;
            if (wait > 0) Thread.Sleep((int)wait);
        }
        return 0;
    }
}
