// dotnet-wait - .NET threads that wait for known times, each in a method
// of its own, for the agent's /block tests (tests/integration/agent).
//
//   dotnet-wait DIR waits [SCALE]   writes DIR/ready (its pid), waits for
//                                   DIR/go, then on three threads at once:
//       Waiter.OnEvent       8 x ManualResetEvent.WaitOne, set by a timer
//                            after 150 ms
//       Waiter.OnSemaphore  12 x SemaphoreSlim.Wait, released by a timer
//                            after 100 ms
//       Waiter.OnJoin        6 x Thread.Join of a thread that sleeps 200 ms
//                            (times multiplied by SCALE, default 1)
//     and times each call with a Stopwatch; then writes DIR/done, one line
//     per method: "NAME CALLS TOTAL_NS BLOCKED" (BLOCKED: the calls that
//     took at least half their time: on a loaded machine a call may find
//     its event already set), and idles until DIR/stop.
//   dotnet-wait DIR pingpong PAIRS [SLEEP_MS]
//                                   PAIRS pairs of threads handing a turn
//                                   back and forth through two
//                                   AutoResetEvents (Pong.Turn),
//                                   as fast as they can, or sleeping
//                                   SLEEP_MS between turns; counts turns
//                                   into DIR/turns at DIR/stop, and exits.
using System;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

static class Waiter
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void OnEvent(ManualResetEvent e) { e.WaitOne(); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void OnSemaphore(SemaphoreSlim s) { s.Wait(); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void OnJoin(Thread t) { t.Join(); }
}

static class Pong
{
    public static long Turns;
    public static volatile bool Stop;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Turn(AutoResetEvent mine, AutoResetEvent theirs, int sleep)
    {
        for (;;) {
            mine.WaitOne();
            if (Stop) { theirs.Set(); return; }
            Interlocked.Increment(ref Turns);
            if (sleep > 0) Thread.Sleep(sleep);
            theirs.Set();
        }
    }
}

static class Program
{
    static void Ready(string dir)
    {
        File.WriteAllText(Path.Combine(dir, "ready.tmp"), Environment.ProcessId.ToString());
        File.Move(Path.Combine(dir, "ready.tmp"), Path.Combine(dir, "ready"), true);
    }

    // Run body n times on a thread of its own, timing each call; the
    // result is "NAME n TOTAL_NS".
    static Thread Timed(string name, int n, int ms, Action<Stopwatch> round, string[] result, int slot)
    {
        return new Thread(() => {
            var sw = new Stopwatch();
            int blocked = 0;
            for (int i = 0; i < n; i++) {
                long before = sw.ElapsedTicks;
                round(sw);
                if ((sw.ElapsedTicks - before) * 1000.0 / Stopwatch.Frequency >= ms / 2.0) blocked++;
            }
            long ns = (long)(sw.ElapsedTicks * (1e9 / Stopwatch.Frequency));
            result[slot] = name + " " + n + " " + ns + " " + blocked;
        }) { Name = "wait-" + name };
    }

    static int Waits(string dir, double scale)
    {
        string go = Path.Combine(dir, "go"), stop = Path.Combine(dir, "stop");
        Ready(dir);
        while (!File.Exists(go)) Thread.Sleep(20);
        int ev = (int)(150 * scale), sem = (int)(100 * scale), join = (int)(200 * scale);
        var result = new string[3];
        var e = new ManualResetEvent(false);
        var s = new SemaphoreSlim(0);
        var ts = new[] {
            Timed("Waiter.OnEvent", 8, ev, sw => {
                e.Reset();
                using var timer = new Timer(_ => e.Set(), null, ev, Timeout.Infinite);
                sw.Start(); Waiter.OnEvent(e); sw.Stop();
            }, result, 0),
            Timed("Waiter.OnSemaphore", 12, sem, sw => {
                using var timer = new Timer(_ => s.Release(), null, sem, Timeout.Infinite);
                sw.Start(); Waiter.OnSemaphore(s); sw.Stop();
            }, result, 1),
            Timed("Waiter.OnJoin", 6, join, sw => {
                var sleeper = new Thread(() => Thread.Sleep(join)) { Name = "sleeper" };
                sleeper.Start();
                sw.Start(); Waiter.OnJoin(sleeper); sw.Stop();
            }, result, 2),
        };
        foreach (var t in ts) t.Start();
        foreach (var t in ts) t.Join();
        var sb = new StringBuilder();
        foreach (var r in result) sb.Append(r).Append('\n');
        File.WriteAllText(Path.Combine(dir, "done.tmp"), sb.ToString());
        File.Move(Path.Combine(dir, "done.tmp"), Path.Combine(dir, "done"), true);
        while (!File.Exists(stop)) Thread.Sleep(50);
        return 0;
    }

    static int PingPong(string dir, int pairs, int sleep)
    {
        string stop = Path.Combine(dir, "stop");
        var ts = new Thread[2 * pairs];
        for (int i = 0; i < pairs; i++) {
            var a = new AutoResetEvent(true);
            var b = new AutoResetEvent(false);
            ts[2 * i] = new Thread(() => Pong.Turn(a, b, sleep)) { Name = "ping" };
            ts[2 * i + 1] = new Thread(() => Pong.Turn(b, a, sleep)) { Name = "pong" };
        }
        foreach (var t in ts) t.Start();
        Ready(dir);
        while (!File.Exists(stop)) Thread.Sleep(50);
        Pong.Stop = true;
        foreach (var t in ts) t.Join();
        File.WriteAllText(Path.Combine(dir, "turns"), Interlocked.Read(ref Pong.Turns).ToString());
        return 0;
    }

    static int Main(string[] args)
    {
        if (args.Length < 2) {
            Console.Error.WriteLine("usage: dotnet-wait DIR waits [SCALE] | pingpong PAIRS [SLEEP_MS]");
            return 2;
        }
        switch (args[1]) {
        case "waits":
            return Waits(args[0], args.Length > 2 ? double.Parse(args[2], System.Globalization.CultureInfo.InvariantCulture) : 1.0);
        case "pingpong":
            return PingPong(args[0], int.Parse(args[2]), args.Length > 3 ? int.Parse(args[3]) : 0);
        }
        Console.Error.WriteLine("unknown mode " + args[1]);
        return 2;
    }
}
