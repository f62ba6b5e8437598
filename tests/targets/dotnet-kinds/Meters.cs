// dotnet-kinds DIR meters - reports known values through its own
// System.Diagnostics.Metrics Meter and its own EventCounters, for the
// tests of 'rtdiag dotnet counters'.
//
// Meter "Rtdiag.Test" (version 1.0):
//   requests       Counter<long>, "{request}": Add(1) exactly 1000 times,
//                  then nothing more (so one interval carries all 1000)
//   queue          UpDownCounter<int>: +7, then -2 (net 5)
//   latency        Histogram<double>, "ms": the values 1..100, once each
//   temperature    ObservableGauge<double>, "Cel": always 21.5
//   hits           Counter<long> with a tag: Add(3, route=/a), Add(4, route=/b)
// EventSource "Rtdiag-Counters":
//   fixed          EventCounter: WriteMetric(42) four times a second (an
//                  interval with no write reports 0; the loop drifts
//                  against the runtime's 1 s timer under load)
//   ticks          IncrementingEventCounter: Increment(5) each interval
//   polled         PollingCounter: 7.25
// Writes DIR/ready (its pid) when the meters exist, DIR/done when every
// measurement was made; each second GC.CollectionCount(0) into DIR/gen0.
// Exits when DIR/stop exists.
using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using System.IO;
using System.Threading;

[EventSource(Name = "Rtdiag-Counters")]
sealed class CounterSource : EventSource
{
    public static readonly CounterSource Log = new CounterSource();
    public EventCounter Fixed;
    public IncrementingEventCounter Ticks;
    PollingCounter polled;

    CounterSource()
    {
        Fixed = new EventCounter("fixed", this) { DisplayName = "Fixed value", DisplayUnits = "B" };
        Ticks = new IncrementingEventCounter("ticks", this) { DisplayName = "Ticks", DisplayRateTimeScale = TimeSpan.FromSeconds(1) };
        polled = new PollingCounter("polled", this, () => 7.25) { DisplayName = "Polled value" };
    }
}

static class MetersProgram
{
    public static int Run(string dir)
    {
        var meter = new Meter("Rtdiag.Test", "1.0");
        var requests = meter.CreateCounter<long>("requests", "{request}", "requests served");
        var queue = meter.CreateUpDownCounter<int>("queue");
        var latency = meter.CreateHistogram<double>("latency", "ms");
        meter.CreateObservableGauge("temperature", () => 21.5, "Cel");
        var hits = meter.CreateCounter<long>("hits");
        File.WriteAllText(Path.Combine(dir, "ready.tmp"), Environment.ProcessId.ToString());
        File.Move(Path.Combine(dir, "ready.tmp"), Path.Combine(dir, "ready"), true);
        // measurements start once a listener is there (the test's session):
        // wait for DIR/go, then until the session's listener has enabled
        // the instruments (it does so some time after the session started:
        // long on a loaded machine), so none is made before anyone listens
        string go = Path.Combine(dir, "go"), stop = Path.Combine(dir, "stop");
        while (!File.Exists(go) && !File.Exists(stop)) Thread.Sleep(20);
        while (!(requests.Enabled && queue.Enabled && latency.Enabled && hits.Enabled) && !File.Exists(stop))
            Thread.Sleep(20);
        for (int i = 0; i < 1000; i++) requests.Add(1);
        queue.Add(7);
        queue.Add(-2);
        for (int v = 1; v <= 100; v++) latency.Record(v);
        hits.Add(3, new KeyValuePair<string, object>("route", "/a"));
        hits.Add(4, new KeyValuePair<string, object>("route", "/b"));
        File.WriteAllText(Path.Combine(dir, "done"), "1000");
        while (!File.Exists(stop)) {
            for (int q = 0; q < 3; q++) {
                CounterSource.Log.Fixed.WriteMetric(42);
                Thread.Sleep(250);
            }
            CounterSource.Log.Fixed.WriteMetric(42);
            CounterSource.Log.Ticks.Increment(5);
            GC.Collect(0); // one gen-0 GC a second: the count is known
            File.WriteAllText(Path.Combine(dir, "gen0.tmp"), GC.CollectionCount(0).ToString());
            File.Move(Path.Combine(dir, "gen0.tmp"), Path.Combine(dir, "gen0"), true);
            Thread.Sleep(250);
        }
        return 0;
    }
}
