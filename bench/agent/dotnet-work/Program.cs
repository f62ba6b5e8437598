// dotnet-work - a .NET CPU-bound workload for bench/agent: runs SECONDS of
// wall time through a three-deep call chain and writes
// "ITERATIONS SECONDS" to OUT.
//
//   dotnet-work OUT SECONDS
using System;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;

static class Work
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    static ulong Mix(ulong x)
    {
        for (int i = 0; i < 200; i++)
            x = (x ^ (x >> 31)) * 0x9E3779B97F4A7C15UL + (ulong)i;
        return x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static ulong Step(ulong x) => Mix(x) + Mix(x + 1);

    [MethodImpl(MethodImplOptions.NoInlining)]
    static ulong Batch(ulong x)
    {
        for (int i = 0; i < 100; i++)
            x = Step(x);
        return x;
    }

    static int Main(string[] args)
    {
        if (args.Length < 2) {
            Console.Error.WriteLine("usage: dotnet-work OUT SECONDS");
            return 2;
        }
        double secs = double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture);
        var sw = Stopwatch.StartNew();
        ulong iters = 0, x = 1;
        double t;
        do {
            x = Batch(x);
            iters++;
        } while ((t = sw.Elapsed.TotalSeconds) < secs);
        File.WriteAllText(args[0], string.Format(System.Globalization.CultureInfo.InvariantCulture,
            "{0} {1:F3} {2} {3:F3}\n", iters, t, x & 1,
            Process.GetCurrentProcess().TotalProcessorTime.TotalSeconds));
        return 0;
    }
}
