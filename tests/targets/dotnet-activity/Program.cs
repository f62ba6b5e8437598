// dotnet-activity: EventSource Start/Stop pairs and a named thread, for
// `rtdiag record --clrevents` (tests/integration/record/test_clrevents.sh).
// A thread named "rtd-request-worker-thread" (longer than the kernel's 15
// bytes of comm) runs rounds of: Rtd-Activity-Test RequestStart(round),
// a 20 ms sleep, RequestStop(round); every 5th round ends with a blocking
// GC. EventSource gives events named XStart/XStop the opcodes Start and
// Stop of a task X, so the stream names them Request/Start, Request/Stop.
//   dotnet-activity READY_FILE   writes its pid to READY_FILE once it runs,
//                                then each round's number on stdout
using System;
using System.Diagnostics.Tracing;
using System.IO;
using System.Threading;

[EventSource(Name = "Rtd-Activity-Test")]
sealed class Requests : EventSource
{
    public static readonly Requests Log = new Requests();

    [Event(1)]
    public void RequestStart(int round) { WriteEvent(1, round); }

    [Event(2)]
    public void RequestStop(int round) { WriteEvent(2, round); }
}

static class Program
{
    static void Worker()
    {
        for (int round = 0; ; round++)
        {
            Requests.Log.RequestStart(round);
            Thread.Sleep(20);
            Requests.Log.RequestStop(round);
            if (round % 5 == 4)
                GC.Collect();
            Console.WriteLine(round);
        }
    }

    static int Main(string[] args)
    {
        var t = new Thread(Worker) { Name = "rtd-request-worker-thread" };
        File.WriteAllText(args[0] + ".tmp", Environment.ProcessId.ToString());
        File.Move(args[0] + ".tmp", args[0]);
        t.Start();
        t.Join();
        return 0;
    }
}
