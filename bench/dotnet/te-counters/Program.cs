// te-counters PID SECONDS - what 'rtdiag dotnet counters collect
// --counters System.Runtime' does, with Microsoft's libraries: a session
// with System.Runtime's EventCounters every second, every EventCounters
// event's Payload read (name, mean or increment) and written as a CSV line
// to stdout. Prints to stderr the time from its start to the first value.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Threading.Tasks;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;

static class Program
{
    static int Main(string[] args)
    {
        var sw = Stopwatch.StartNew();
        int pid = int.Parse(args[0]);
        double seconds = double.Parse(args[1]);
        var client = new DiagnosticsClient(pid);
        var providers = new List<EventPipeProvider> {
            new EventPipeProvider("System.Runtime", EventLevel.Verbose, 0xFFFFFFFF,
                new Dictionary<string, string> { { "EventCounterIntervalSec", "1" } }),
        };
        using var session = client.StartEventPipeSession(providers, false);
        var source = new EventPipeEventSource(session.EventStream);
        double first = -1;
        long values = 0;
        var stdout = Console.Out;
        source.Dynamic.All += ev => {
            if (ev.EventName != "EventCounters") return;
            var payload = (IDictionary<string, object>)((IDictionary<string, object>)ev.PayloadValue(0))["Payload"];
            object v = payload.TryGetValue("Mean", out var m) ? m : payload["Increment"];
            if (first < 0) first = sw.Elapsed.TotalSeconds;
            values++;
            stdout.WriteLine($"{ev.TimeStampRelativeMSec / 1000:F3},{ev.ProviderName},{payload["DisplayName"]},{v}");
        };
        var reader = Task.Run(() => source.Process());
        Task.Delay(TimeSpan.FromSeconds(seconds)).Wait();
        session.Stop();
        reader.Wait();
        Console.Error.WriteLine($"first {first:F3} values {values}");
        return values > 0 ? 0 : 1;
    }
}
