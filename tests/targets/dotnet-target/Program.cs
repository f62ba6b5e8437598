// dotnet-target - a .NET program for rtdiag's integration tests to observe.
//
//   dotnet-target DIR [burn]
//
// Writes DIR/ready (its pid) once Main runs, then loops:
// - emits an event of its own EventSource "Rtdiag-Test" (event 1 "Tick")
//   every 10 ms, so a collect session sees the program's own events, and
//   every 10th tick writes how many it emitted to DIR/ticks (a test then
//   runs a session until the program made N of them, whatever the load);
// - copies the environment variable RTDIAG_TEST_VAR into DIR/env when it
//   appears, so a test can see SetEnvironmentVariable from inside;
// - with "burn", spends its time in RtdiagBurn.Spin / Hash so CPU samples
//   land in known methods.
// Exits when DIR/stop exists.
using System;
using System.Diagnostics.Tracing;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

[EventSource(Name = "Rtdiag-Test")]
sealed class TestSource : EventSource
{
    public static readonly TestSource Log = new TestSource();
    [Event(1, Level = EventLevel.Informational)]
    public void Tick(int n, string what) { WriteEvent(1, n, what); }
}

static class RtdiagBurn
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static ulong Hash(ulong x)
    {
        for (int i = 0; i < 2000; i++)
            x = (x ^ (x >> 31)) * 0x9E3779B97F4A7C15UL + (ulong)i;
        return x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static ulong Spin(int ms)
    {
        ulong acc = 1;
        var end = Environment.TickCount64 + ms;
        while (Environment.TickCount64 < end)
            acc += Hash(acc);
        return acc;
    }
}

static class Program
{
    static int Main(string[] args)
    {
        if (args.Length < 1) {
            Console.Error.WriteLine("usage: dotnet-target DIR [burn]");
            return 2;
        }
        string dir = args[0];
        bool burn = args.Length > 1 && args[1] == "burn";
        File.WriteAllText(Path.Combine(dir, "ready.tmp"), Environment.ProcessId.ToString());
        File.Move(Path.Combine(dir, "ready.tmp"), Path.Combine(dir, "ready"), true);
        bool envSeen = false;
        ulong sink = 0;
        for (int n = 0; ; n++) {
            TestSource.Log.Tick(n, "tick");
            if (n % 10 == 9) {
                File.WriteAllText(Path.Combine(dir, "ticks.tmp"), (n + 1).ToString());
                File.Move(Path.Combine(dir, "ticks.tmp"), Path.Combine(dir, "ticks"), true);
            }
            if (!envSeen) {
                string v = Environment.GetEnvironmentVariable("RTDIAG_TEST_VAR");
                if (v != null) {
                    File.WriteAllText(Path.Combine(dir, "env"), v);
                    envSeen = true;
                }
            }
            if (File.Exists(Path.Combine(dir, "stop")))
                break;
            if (burn)
                sink += RtdiagBurn.Spin(10);
            else
                Thread.Sleep(10);
        }
        return sink == 42 ? 1 : 0;
    }
}
