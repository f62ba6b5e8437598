// dotnet-flight: the program of the flight recorder's tests (issue #31).
// In a loop on its main thread: an EventSource event (Rtd-Flight-Test/Mark,
// its round number), at once a 40 ms sleep (an off-CPU slice on the same
// thread's kernel track), then about 10 ms of CPU. A meter "Bars.Meter"
// has an observable gauge "bars.queue.length" whose value the test sets
// through LEVEL_FILE: each round reads it, and a new value is announced
// by the event Rtd-Flight-Test/Level (the time the test measures the
// trigger from).
//   dotnet-flight READY_FILE LEVEL_FILE [ROUNDS]
//     writes its pid to READY_FILE once it runs, each round's number on
//     stdout; with ROUNDS, returns after that many rounds counted from
//     the first whose gauge is above 0 (the test's "go", once it records)
// Two levels are actions, for the triggers on runtime events
// (test_flight_runtime.sh), announced by the Level event like any value:
//   -1  each round throws and catches a System.TimeoutException;
//   -2  once, a live graph of about 160 MB of small objects is built and a
//       blocking, compacting gen-2 collection forced: a suspension of the
//       managed threads of tens of ms or more, against the ~1 ms of the
//       loop's own young collections.
using System;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

[EventSource(Name = "Rtd-Flight-Test")]
sealed class Marks : EventSource
{
    public static readonly Marks Log = new Marks();

    [Event(1)]
    public void Mark(int round) { WriteEvent(1, round); }

    [Event(2)]
    public void Level(int value) { WriteEvent(2, value); }
}

static class Program
{
    static double sink;
    static volatile int level;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static double BurnNamedMethod(int ms)
    {
        var sw = Stopwatch.StartNew();
        double x = 1;
        while (sw.ElapsedMilliseconds < ms)
            for (int i = 0; i < 10000; i++)
                x = x * 1.0000001 + 1e-9;
        return x;
    }

    static object[] kept;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void LongCollection()
    {
        kept = new object[1 << 22];
        for (int i = 0; i < kept.Length; i++)
            kept[i] = new byte[16];
        GC.Collect(2, GCCollectionMode.Forced, true, true);
        GC.KeepAlive(kept);
    }

    static int ReadLevel(string path)
    {
        try { return int.Parse(File.ReadAllText(path).Trim()); }
        catch (Exception) { return level; } // not there yet, or half written
    }

    static int Main(string[] args)
    {
        var meter = new Meter("Bars.Meter");
        meter.CreateObservableGauge("bars.queue.length", () => level);
        sink += BurnNamedMethod(1);
        int rounds = args.Length > 2 ? int.Parse(args[2]) : -1;
        File.WriteAllText(args[0] + ".tmp", Environment.ProcessId.ToString());
        File.Move(args[0] + ".tmp", args[0]);
        for (int round = 0; ; round++)
        {
            Marks.Log.Mark(round);
            Thread.Sleep(40);
            sink += BurnNamedMethod(10);
            int v = ReadLevel(args[1]);
            if (v != level)
            {
                level = v;
                Marks.Log.Level(v);
                if (v == -2)
                    LongCollection();
            }
            if (level == -1)
            {
                try { throw new TimeoutException("round " + round); }
                catch (TimeoutException) { }
            }
            Console.WriteLine(round);
            if (rounds > 0 && level > 0 && --rounds == 0)
                return 0;
        }
    }
}
