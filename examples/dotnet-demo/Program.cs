// dotnet-demo - the program `make run` profiles: a busy loop over three
// kinds of work with different costs, so the hottest methods are known:
// Mandelbrot.Render (most), Primes.Sieve, then Sorting.SortRandom.
//
//   dotnet-demo [SECONDS]     (default: run until killed)
using System;
using System.Runtime.CompilerServices;

static class Mandelbrot
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
}

static class Primes
{
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
}

static class Sorting
{
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

static class Program
{
    static int Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : double.PositiveInfinity;
        var end = DateTime.UtcNow.AddSeconds(Math.Min(seconds, 1e6));
        long sink = 0;
        int round = 0;
        Console.WriteLine($"dotnet-demo: pid {Environment.ProcessId}, working");
        for (; DateTime.UtcNow < end; round++) {
            sink += Mandelbrot.Render(220);
            sink += Primes.Sieve(1_500_000);
            sink += Sorting.SortRandom(100_000, round);
        }
        // bench/dotnet/run.sh compares rounds with and without a profiler
        Console.WriteLine($"rounds: {round}");
        Console.WriteLine($"cpu_ms: {(long)System.Diagnostics.Process.GetCurrentProcess().TotalProcessorTime.TotalMilliseconds}");
        return sink == 42 ? 1 : 0;
    }
}
