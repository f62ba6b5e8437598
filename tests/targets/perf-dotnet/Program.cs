// perf-dotnet: a hot loop in managed code that calls into a small C
// library through P/Invoke, for the CPU profiler's mixed-mode test.
// A background thread compiles a new dynamic method every 50 ms, so a
// test can see whether the runtime is writing its perf map (a new line for
// each) or not.
// usage: perf-dotnet SECONDS [READY_FILE]
using System;
using System.Diagnostics;
using System.IO;
using System.Reflection.Emit;
using System.Threading;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace RtdiagPerf
{
    public static class Native
    {
        [DllImport("perfnative")]
        public static extern ulong native_work(ulong seed, int n);
    }

    public static class Program
    {
        static ulong sink;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static ulong ManagedSpin(int n)
        {
            ulong x = sink;
            for (int i = 0; i < n; i++)
                x = x * 6364136223846793005UL + 1442695040888963407UL;
            return x;
        }

        // framework code: string hashing runs precompiled (ReadyToRun)
        // System.Private.CoreLib code until the tiered JIT replaces it
        [MethodImpl(MethodImplOptions.NoInlining)]
        static int FrameworkSpin(int n)
        {
            string s = "rtdiag ReadyToRun framework code " + n;
            int h = 0;
            for (int i = 0; i < n; i++)
                h ^= s.GetHashCode();
            return h;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void HotLoop(double seconds)
        {
            var sw = Stopwatch.StartNew();
            while (sw.Elapsed.TotalSeconds < seconds)
            {
                sink += ManagedSpin(200000);
                sink += Native.native_work(sink, 400000);
                sink += (ulong)FrameworkSpin(20000);
            }
        }

        static void JitForever()
        {
            for (int i = 0; ; i++)
            {
                var dm = new DynamicMethod("Dyn" + i, typeof(int), new[] { typeof(int) });
                var il = dm.GetILGenerator();
                il.Emit(OpCodes.Ldarg_0);
                il.Emit(OpCodes.Ldc_I4, i);
                il.Emit(OpCodes.Add);
                il.Emit(OpCodes.Ret);
                var f = (Func<int, int>)dm.CreateDelegate(typeof(Func<int, int>));
                sink += (ulong)f(i);
                Thread.Sleep(50);
            }
        }

        public static int Main(string[] args)
        {
            new Thread(JitForever) { IsBackground = true }.Start();
            double seconds = args.Length > 0 ? double.Parse(args[0], System.Globalization.CultureInfo.InvariantCulture) : 2;
            // warm up so the methods are jitted before the ready signal
            HotLoop(0.2);
            if (args.Length > 1)
                File.WriteAllText(args[1], Environment.ProcessId.ToString());
            HotLoop(seconds);
            Console.WriteLine(sink);
            return 0;
        }
    }
}
