// dotnet-kinds - a .NET program doing one known kind of work, for the tests
// of rtdiag's non-CPU profiles and of 'dotnet stack'.
//
//   dotnet-kinds DIR alloc          allocate, forever: byte[1000] from
//                                   AllocBytes three times for each
//                                   long[125] from AllocLongs (both 1024
//                                   bytes with their header): 3:1 by bytes
//   dotnet-kinds DIR lock           two threads take one lock in
//                                   Contended.Take, each holding it 2 ms
//   dotnet-kinds DIR exception N    throw and catch N InvalidOperation-
//                                   Exceptions from Thrower.Throw, exit
//   dotnet-kinds DIR sleeplock N [S] N threads take one lock in
//                                   SleepLock.Take and sleep 5 ms holding
//                                   it: the others wait in Monitor.Enter,
//                                   using next to no CPU; and S threads
//                                   spinning in SleepLock.Spin (more than
//                                   the CPUs: runnable, not all running)
//   dotnet-kinds DIR park           threads parked in Parked.InSleep and
//                                   Parked.InWait; main in Parked.Main
//   dotnet-kinds DIR meters         its own Meter and EventCounters (Meters.cs)
//   dotnet-kinds DIR rates          one instrument of each kind at known
//                                   rates (Rates.cs)
//   dotnet-kinds DIR heap K         a tree of K objects (Heap.cs)
//   dotnet-kinds DIR steady         all three at a steady pace set by
//                                   sleeps, not by the CPU it gets: 1 MB
//                                   allocated, one exception thrown and
//                                   one contended 2 ms hold of a lock per
//                                   thread per ~millisecond, until stop
//                                   (profiles must keep growing with the
//                                   session's length); what it did so far
//                                   in DIR/progress ("ALLOCS WAITED_US
//                                   THROWS")
// (one program for all, so the tests build one .NET project)
//
// Writes DIR/ready (its pid) once working; exits when DIR/stop exists
// (exception: when done).
using System;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

static class Alloc
{
    public static object Keep;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void AllocBytes() { Keep = new byte[1000]; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void AllocLongs() { Keep = new long[125]; }
}

static class Contended
{
    static readonly object Gate = new object();
    public static long Work;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Take()
    {
        lock (Gate) {
            var end = Environment.TickCount64 + 2;
            while (Environment.TickCount64 < end) Work++;
        }
    }
}

static class Thrower
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Throw(int i) { throw new InvalidOperationException("kinds " + i); }
}

static class Steady
{
    static readonly object Gate = new object();

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Allocate()
    {
        for (int k = 0; k < 256; k++) {
            Alloc.AllocBytes(); Alloc.AllocBytes(); Alloc.AllocBytes(); Alloc.AllocLongs();
        }
    }

    // held while asleep, so the other thread waits whatever CPU it gets;
    // the time it waited to take the lock is added to waited (Stopwatch
    // ticks): what a contention profile's delay should sum to
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Hold()
    {
        long t0 = Stopwatch.GetTimestamp();
        lock (Gate) {
            Interlocked.Add(ref waited, Stopwatch.GetTimestamp() - t0);
            Thread.Sleep(2);
        }
    }

    // what each kind has done so far (Allocate calls, microseconds waited
    // for the lock, throws), written to DIR/progress as "ALLOCS WAITED_US
    // THROWS" every 10 ms: a test compares a profile with the work the
    // program did during its session
    static long allocs, waited, throws;

    public static void Run(string dir, string stop)
    {
        ThreadStart every(Action a, Func<long> done) => () => { while (!File.Exists(stop)) { a(); done(); Thread.Sleep(1); } };
        var ts = new[] {
            new Thread(every(Allocate, () => Interlocked.Increment(ref allocs))) { Name = "steady-alloc" },
            new Thread(every(Hold, () => 0)) { Name = "steady-lock-1" },
            new Thread(every(Hold, () => 0)) { Name = "steady-lock-2" },
            new Thread(every(() => { try { Thrower.Throw(0); } catch (InvalidOperationException) { } },
                             () => Interlocked.Increment(ref throws))) { Name = "steady-throw" },
        };
        foreach (var t in ts) t.Start();
        string tmp = Path.Combine(dir, "progress.tmp"), progress = Path.Combine(dir, "progress");
        while (!File.Exists(stop)) {
            long us = Interlocked.Read(ref waited) * 1000000 / Stopwatch.Frequency;
            File.WriteAllText(tmp, Interlocked.Read(ref allocs) + " " + us + " " + Interlocked.Read(ref throws));
            File.Move(tmp, progress, true);
            Thread.Sleep(10);
        }
        foreach (var t in ts) t.Join();
    }
}

static class SleepLock
{
    static readonly object Gate = new object();

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Take() { lock (Gate) Thread.Sleep(5); }

    public static long Spins;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Spin()
    {
        long x = 0;
        for (int i = 0; i < 10000000; i++) x += i ^ (x >> 3);
        Interlocked.Add(ref Spins, x & 1);
    }

    public static void Run(int n, int s, string stop)
    {
        var ts = new Thread[n + s];
        for (int i = 0; i < n + s; i++) {
            ts[i] = i < n ? new Thread(() => { while (!File.Exists(stop)) Take(); }) { Name = "sleeplock-" + i }
                          : new Thread(() => { while (!File.Exists(stop)) Spin(); }) { Name = "spin-" + i };
            ts[i].Start();
        }
        foreach (var t in ts) t.Join();
    }
}

static class Parked
{
    public static readonly ManualResetEventSlim Never = new ManualResetEventSlim(false);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void InSleep() { Thread.Sleep(Timeout.Infinite); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void InWait() { Never.Wait(); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Main(string stop)
    {
        while (!File.Exists(stop)) Thread.Sleep(20);
    }
}

static class Program
{
    static void Ready(string dir)
    {
        File.WriteAllText(Path.Combine(dir, "ready.tmp"), Environment.ProcessId.ToString());
        File.Move(Path.Combine(dir, "ready.tmp"), Path.Combine(dir, "ready"), true);
    }

    static int Main(string[] args)
    {
        if (args.Length < 2) {
            Console.Error.WriteLine("usage: dotnet-kinds DIR alloc|lock|exception N|park");
            return 2;
        }
        string dir = args[0], stop = Path.Combine(dir, "stop");
        switch (args[1]) {
        case "meters":
            return MetersProgram.Run(dir);
        case "heap":
            return HeapProgram.Run(dir, int.Parse(args[2]));
        case "rates":
            return RatesProgram.Run(dir);
        case "alloc":
            Ready(dir);
            for (long i = 0; ; i++) {
                if ((i & 0xFFFF) == 0 && File.Exists(stop)) return 0;
                Alloc.AllocBytes();
                Alloc.AllocBytes();
                Alloc.AllocBytes();
                Alloc.AllocLongs();
            }
        case "lock": {
            Ready(dir);
            ThreadStart body = () => { while (!File.Exists(stop)) for (int k = 0; k < 50; k++) Contended.Take(); };
            var t1 = new Thread(body) { Name = "contender-1" };
            var t2 = new Thread(body) { Name = "contender-2" };
            t1.Start(); t2.Start();
            t1.Join(); t2.Join();
            return 0;
        }
        case "exception": {
            int n = int.Parse(args[2]), caught = 0;
            Ready(dir);
            for (int i = 0; i < n; i++) {
                try { Thrower.Throw(i); } catch (InvalidOperationException) { caught++; }
            }
            File.WriteAllText(Path.Combine(dir, "thrown"), caught.ToString());
            return caught == n ? 0 : 1;
        }
        case "sleeplock":
            Ready(dir);
            SleepLock.Run(int.Parse(args[2]), args.Length > 3 ? int.Parse(args[3]) : 0, stop);
            return 0;
        case "steady":
            Ready(dir);
            Steady.Run(dir, stop);
            return 0;
        case "park": {
            var a = new Thread(Parked.InSleep) { IsBackground = true, Name = "parked-sleep" };
            var b = new Thread(Parked.InWait) { IsBackground = true, Name = "parked-wait" };
            a.Start(); b.Start();
            Ready(dir);
            Parked.Main(stop);
            return 0;
        }
        }
        Console.Error.WriteLine("unknown mode " + args[1]);
        return 2;
    }
}
