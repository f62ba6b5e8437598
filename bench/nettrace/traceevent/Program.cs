// te-count FILE: decode a nettrace file with TraceEvent's EventPipeEventSource
// and count events per type (what `rtdiag nettrace stats` does). Prints
// "events N seconds S".
using System;
using System.Collections.Generic;
using System.Diagnostics;
using Microsoft.Diagnostics.Tracing;

static class Program
{
    static int Main(string[] args)
    {
        var sw = Stopwatch.StartNew();
        long n = 0;
        var perType = new Dictionary<string, long>();
        using (var source = new EventPipeEventSource(args[0]))
        {
            source.AllEvents += e =>
            {
                n++;
                string k = e.ProviderName + "/" + e.EventName;
                perType.TryGetValue(k, out long c);
                perType[k] = c + 1;
            };
            source.Process();
        }
        sw.Stop();
        Console.WriteLine($"events {n} types {perType.Count} seconds {sw.Elapsed.TotalSeconds:F3}");
        return 0;
    }
}
