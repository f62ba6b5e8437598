// dotnet-bench-work - the target whose slowdown bench/dotnet/run.sh measures
// while a tool observes it.
//
//   dotnet-bench-work [cpu|mixed]
//
// Works in small units on its main thread and counts them:
//   cpu    examples/dotnet-demo's round cut in four (Mandelbrot, sieve, sort;
//          the arrays land on the large-object heap, so GCs happen as in the
//          demo), about 5 ms a unit;
//   mixed  the same plus, per unit, small allocations of two types, a lock
//          taken by a second thread too (contention), and one exception
//          thrown and caught: events for alloc, lock and exception sessions.
// The work is a copy, not a reference to the demo, so the yardstick stays
// the same when the demo changes.
// Prints "ready PID" once warm. Each line read on stdin marks a point; at a
// mark it prints "window units=U cpu_ms=C wall_ms=W" for the span since the
// previous mark (the process's CPU: every thread, the runtime's own
// EventPipe threads included). Exits at the end of stdin.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

static class Work
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Render(int size)
    {
        int inside = 0;
        for (int y = 0; y < size; y++)
            for (int x = 0; x < size; x++) {
                double cr = 2.5 * x / size - 2.0, ci = 2.0 * y / size - 1.0;
                double zr = 0, zi = 0;
                int i = 0;
                for (; i < 200 && zr * zr + zi * zi < 4; i++) {
                    double t = zr * zr - zi * zi + cr;
                    zi = 2 * zr * zi + ci;
                    zr = t;
                }
                if (i == 200) inside++;
            }
        return inside;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Sieve(int n)
    {
        var composite = new bool[n + 1];
        int count = 0;
        for (int i = 2; i <= n; i++) {
            if (composite[i]) continue;
            count++;
            for (long j = (long)i * i; j <= n; j += i) composite[j] = true;
        }
        return count;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int SortRandom(int n, int seed)
    {
        var rng = new Random(seed);
        var a = new int[n];
        for (int i = 0; i < n; i++) a[i] = rng.Next();
        Array.Sort(a);
        return a[n / 2];
    }
}

sealed class Small { public long A, B; public Small Next; }
sealed class Medium { public long A, B, C, D, E, F, G, H; }

static class Mixed
{
    public static readonly object Gate = new object();
    public static long Shared;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Allocate(int n)
    {
        long s = 0;
        Small head = null;
        for (int i = 0; i < n; i++) {
            head = new Small { A = i, Next = head };
            var m = new Medium { A = i };
            s += m.A + head.A;
            if ((i & 63) == 0) head = null;
        }
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Contend()
    {
        lock (Gate) {
            // long enough (~50 us) that a waiter stops spinning and blocks:
            // a contention event
            for (int i = 0; i < 100000; i++) Shared += i;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Throw(int n)
    {
        try {
            if (n >= 0) throw new InvalidOperationException("bench");
        } catch (InvalidOperationException) {
            return 1;
        }
        return 0;
    }
}

static class Program
{
    static long units;

    static int Main(string[] args)
    {
        bool mixed = args.Length > 0 && args[0] == "mixed";
        var proc = Process.GetCurrentProcess();
        var wall = Stopwatch.StartNew();
        long sink = 0;
        if (mixed) {
            var t = new Thread(() => {
                for (;;) {
                    Mixed.Contend();
                    Thread.Sleep(1);
                }
            }) { IsBackground = true, Name = "contender" };
            t.Start();
        }
        // warm up: tiered compilation settles within a second
        for (int r = 0; wall.ElapsedMilliseconds < 1500; r++)
            sink += Unit(r, mixed);
        var reader = new Thread(() => {
            long u0 = Volatile.Read(ref units);
            proc.Refresh();
            double c0 = proc.TotalProcessorTime.TotalMilliseconds;
            double w0 = wall.Elapsed.TotalMilliseconds;
            while (Console.In.ReadLine() != null) {
                long u1 = Volatile.Read(ref units);
                proc.Refresh();
                double c1 = proc.TotalProcessorTime.TotalMilliseconds;
                double w1 = wall.Elapsed.TotalMilliseconds;
                Console.WriteLine($"window units={u1 - u0} cpu_ms={c1 - c0:F0} wall_ms={w1 - w0:F0}");
                u0 = u1; c0 = c1; w0 = w1;
            }
            Environment.Exit(sink == 42 ? 1 : 0);
        }) { IsBackground = true, Name = "marks" };
        Console.WriteLine($"ready {Environment.ProcessId}");
        reader.Start();
        for (int r = 0; ; r++) {
            sink += Unit(r, mixed);
            Interlocked.Increment(ref units);
        }
    }

    static long Unit(int r, bool mixed)
    {
        long s = Work.Render(110) + Work.Sieve(375_000) + Work.SortRandom(25_000, r);
        if (mixed) {
            s += Mixed.Allocate(2000);
            Mixed.Contend();
            s += Mixed.Throw(r);
        }
        return s;
    }
}
