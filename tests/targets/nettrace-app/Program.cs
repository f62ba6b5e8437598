// rtdiag nettrace test target.
//   nettrace-app check  : writes the known events below, burns CPU in
//                         RtdiagHotMethod, allocates, throws and catches.
//   nettrace-app bench N: writes N batches of events as fast as it can
//                         (for bench/nettrace: a trace of 100+ MB).
//   nettrace-app all [N] : everything the TraceEvent comparison needs to
//                         see (tests/integration/nettrace/test_traceevent.sh):
//                         TraceLogging events with bools and floats, NaN
//                         and infinities, TPL tasks, lock contention, waits,
//                         thread pool work, allocations, exceptions, GCs;
//                         N rounds (default 1) for a large trace.
// Run with DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath=FILE
// DOTNET_EventPipeConfig=... ; the values written here are what the
// decoder test expects, so keep them in sync with test_dotnet.sh.
using System;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Runtime.CompilerServices;

[EventSource(Name = "Rtdiag-Test")]
sealed class TestSource : EventSource
{
    public static readonly TestSource Log = new TestSource();

    [Event(1, Level = EventLevel.Informational)]
    public unsafe void Numbers(int i32, long i64, uint u32, ulong u64, short i16,
                               ushort u16, byte u8, sbyte i8, bool b, float f32,
                               double f64, char c)
    {
        EventData* d = stackalloc EventData[12];
        d[0] = new EventData { DataPointer = (IntPtr)(&i32), Size = 4 };
        d[1] = new EventData { DataPointer = (IntPtr)(&i64), Size = 8 };
        d[2] = new EventData { DataPointer = (IntPtr)(&u32), Size = 4 };
        d[3] = new EventData { DataPointer = (IntPtr)(&u64), Size = 8 };
        d[4] = new EventData { DataPointer = (IntPtr)(&i16), Size = 2 };
        d[5] = new EventData { DataPointer = (IntPtr)(&u16), Size = 2 };
        d[6] = new EventData { DataPointer = (IntPtr)(&u8), Size = 1 };
        d[7] = new EventData { DataPointer = (IntPtr)(&i8), Size = 1 };
        int bi = b ? 1 : 0;
        d[8] = new EventData { DataPointer = (IntPtr)(&bi), Size = 4 };
        d[9] = new EventData { DataPointer = (IntPtr)(&f32), Size = 4 };
        d[10] = new EventData { DataPointer = (IntPtr)(&f64), Size = 8 };
        d[11] = new EventData { DataPointer = (IntPtr)(&c), Size = 2 };
        WriteEventCore(1, 12, d);
    }

    [Event(2, Level = EventLevel.Informational)]
    public void Text(string s, Guid g, DateTime when) { WriteEvent(2, s, g, when); }

    [Event(3, Level = EventLevel.Informational)]
    public void Blob(byte[] data) { WriteEvent(3, data); }

    [Event(4, Level = EventLevel.Informational, Opcode = EventOpcode.Start)]
    public void PhaseStart(int phase) { WriteEvent(4, phase); }

    [Event(5, Level = EventLevel.Informational, Opcode = EventOpcode.Stop)]
    public void PhaseStop(int phase) { WriteEvent(5, phase); }

    [Event(6, Level = EventLevel.Verbose)]
    public unsafe void Tick(long n, int k)
    {
        EventData* d = stackalloc EventData[2];
        d[0] = new EventData { DataPointer = (IntPtr)(&n), Size = 8 };
        d[1] = new EventData { DataPointer = (IntPtr)(&k), Size = 4 };
        WriteEventCore(6, 2, d);
    }
}

// TraceLogging (self-describing) events: EventSource.Write with anonymous
// types. Their bools are one byte on the wire; EventSource's own are four.
sealed class TlSource : EventSource
{
    public static readonly TlSource Log = new TlSource();
    TlSource() : base("Rtdiag-TL", EventSourceSettings.EtwSelfDescribingEventFormat) { }
}

[EventSource(Name = "Rtdiag-Floats")]
sealed class FloatSource : EventSource
{
    public static readonly FloatSource Log = new FloatSource();

    [Event(1, Level = EventLevel.Informational)]
    public void Specials(double nan, double pinf, double ninf, float fnan, float third, double tenth)
    { WriteEvent(1, nan, pinf, ninf, fnan, third, tenth); }
}

static class Program
{
    static volatile object sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static double RtdiagHotMethod(int ms)
    {
        var sw = Stopwatch.StartNew();
        double x = 1.0;
        while (sw.ElapsedMilliseconds < ms)
            for (int i = 1; i < 10000; i++)
                x = Math.Sqrt(x * i + 1.0) + 0.5;
        return x;
    }

    static readonly object gate = new object();

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Everything(int round)
    {
        var tl = TlSource.Log;
        for (int i = 0; i < 200; i++)
            tl.Write("Bools", new { a = (i & 1) == 0, n = i, b = (i & 2) == 0, c = true, d = 1.5 * i, s = "tl " + i });
        tl.Write("Nested", new { outer = new { x = 1, y = (short)-2 }, flag = false, last = (byte)9 });
        FloatSource.Log.Specials(double.NaN, double.PositiveInfinity, double.NegativeInfinity, float.NaN, 1f / 3, 0.1);
        // TPL and the thread pool
        var tasks = new System.Threading.Tasks.Task[8];
        for (int i = 0; i < tasks.Length; i++)
        {
            int k = i;
            tasks[i] = System.Threading.Tasks.Task.Run(async () =>
            {
                await System.Threading.Tasks.Task.Delay(1 + k);
                sink = new byte[1000 * (k + 1)];
            });
        }
        System.Threading.Tasks.Task.WaitAll(tasks);
        // lock contention and waits
        var go = new System.Threading.ManualResetEventSlim(false);
        var holder = new System.Threading.Thread(() =>
        {
            lock (gate) { go.Set(); System.Threading.Thread.Sleep(30); }
        });
        holder.Start();
        go.Wait();
        lock (gate) { sink = round; }
        holder.Join();
        var mre = new System.Threading.ManualResetEvent(false);
        System.Threading.ThreadPool.QueueUserWorkItem(_ => { System.Threading.Thread.Sleep(5); mre.Set(); });
        mre.WaitOne();
        // allocations, exceptions, a collection
        for (int i = 0; i < 3000; i++)
            sink = new byte[200 + i];
        for (int i = 0; i < 3; i++)
        {
            try { Throw(i); } catch (InvalidOperationException) { }
        }
        GC.Collect();
        RtdiagHotMethod(50);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Throw(int i) { throw new InvalidOperationException("rtdiag test exception " + i); }

    static int Main(string[] args)
    {
        string mode = args.Length > 0 ? args[0] : "check";
        var log = TestSource.Log;
        if (mode == "bench")
        {
            long n = args.Length > 1 ? long.Parse(args[1]) : 1000000;
            for (long i = 0; i < n; i++)
            {
                log.Tick(i, (int)(i & 1023));
                if ((i & 63) == 0)
                    log.Text("bench event " + i, Guid.Empty, new DateTime(2024, 1, 2, 3, 4, 5, DateTimeKind.Utc));
                if ((i & 4095) == 0)
                    sink = new byte[100000];
            }
            return 0;
        }
        if (mode == "all")
        {
            int rounds = args.Length > 1 ? int.Parse(args[1]) : 1;
            for (int round = 0; round < rounds; round++)
                Everything(round);
            Console.WriteLine("done all");
            return 0;
        }
        log.PhaseStart(1);
        log.Numbers(-123456789, -1234567890123456789L, 4000000000u, 18000000000000000000UL,
                    (short)-12345, (ushort)54321, (byte)200, (sbyte)-100, true, 1.5f, -2.25, 'Z');
        log.Text("hello from rtdiag \u00e9\u4e2d", new Guid("01234567-89ab-cdef-0123-456789abcdef"),
                 new DateTime(2024, 1, 2, 3, 4, 5, DateTimeKind.Utc));
        log.Blob(new byte[] { 1, 2, 3, 250 });
        for (int i = 0; i < 3; i++)
        {
            try { Throw(i); } catch (InvalidOperationException) { }
        }
        for (int i = 0; i < 2000; i++)
            sink = new byte[10000 + i];
        GC.Collect();
        double r = RtdiagHotMethod(1500);
        log.PhaseStop(1);
        Console.WriteLine("done " + (r > 0 ? "ok" : "?"));
        return 0;
    }
}
