// dotnet-record: the program of `rtdiag record`'s first test (issue #30).
// In a loop on its main thread: an EventSource event (Rtd-Record-Test/Mark,
// its round number), at once a 40 ms sleep, then about 10 ms of CPU in a
// method of a known name (BurnNamedMethod). The recording must show each
// event followed on the same thread's track by a ~40 ms off-CPU slice,
// and samples in BurnNamedMethod. Every 10th round ends with a blocking GC.
//   dotnet-record READY_FILE [gc|idle]  writes its pid to READY_FILE once it runs,
//                              then each round's number on stdout
// gc: two threads (spin0, spin1) burn CPU in managed code while the main
// thread induces a blocking GC every 100 ms (the second test).
// idle: nothing runs after the ready file (bench/flight/rss.sh's idle cost).
using System;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

[EventSource(Name = "Rtd-Record-Test")]
sealed class Marks : EventSource
{
    public static readonly Marks Log = new Marks();

    [Event(1)]
    public void Mark(int round) { WriteEvent(1, round); }
}

static class Program
{
    static double sink;

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

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void SpinWorker()
    {
        for (;;)
            sink2 += BurnNamedMethod(5);
    }

    static double sink2;

    // "gc" mode: two threads burn CPU in managed code while the main thread
    // induces a blocking GC every 100 ms: the runtime suspends the workers
    static int GcMode()
    {
        for (int i = 0; i < 2; i++)
            new Thread(SpinWorker) { IsBackground = true, Name = "spin" + i }.Start();
        for (int round = 0; ; round++)
        {
            Thread.Sleep(100);
            GC.Collect();
            Console.WriteLine(round);
        }
    }

    static int Main(string[] args)
    {
        // jit what the loop runs before it says it is ready
        sink += BurnNamedMethod(1);
        File.WriteAllText(args[0] + ".tmp", Environment.ProcessId.ToString());
        File.Move(args[0] + ".tmp", args[0]);
        if (args.Length > 1 && args[1] == "gc")
            return GcMode();
        if (args.Length > 1 && args[1] == "idle")
        {
            // nothing runs: what a recorder costs waiting on a quiet process
            Thread.Sleep(Timeout.Infinite);
            return 0;
        }
        for (int round = 0; ; round++)
        {
            Marks.Log.Mark(round);
            Thread.Sleep(40);
            sink += BurnNamedMethod(10);
            if (round % 10 == 9)
                GC.Collect(); // a blocking GC, after the round's sleep
            Console.WriteLine(round); // the test waits for rounds here
        }
    }
}
