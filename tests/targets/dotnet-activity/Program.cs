// dotnet-activity: EventSource Start/Stop pairs and a named thread, for
// `rtdiag record --clrevents` (tests/integration/record/test_clrevents.sh).
// A thread named "rtd-request-worker-thread" (longer than the kernel's 15
// bytes of comm) runs rounds of: Rtd-Activity-Test RequestStart(round),
// a 20 ms sleep, RequestStop(round); every 5th round ends with a blocking
// GC. EventSource gives events named XStart/XStop the opcodes Start and
// Stop of a task X, so the stream names them Request/Start, Request/Stop.
// Beside it, two async flows write AsyncRequestStart(round), await a
// 20 ms Task.Delay and write AsyncRequestStop(round) (the runtime pairs
// them by ActivityID when TplEventSource's TasksFlowActivityIds keyword is
// on): one loops on the thread pool, its continuation on whichever pool
// thread runs it (often the one that began the request, on a loaded
// machine every time); the other begins each request on a thread of its
// own ("rtd-async-starter"), which waits while the continuation runs on a
// pool thread: it ends on another thread every time.
//   dotnet-activity READY_FILE   writes its pid to READY_FILE once it runs,
//                                then each round's number on stdout
using System;
using System.Diagnostics.Tracing;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

[EventSource(Name = "Rtd-Activity-Test")]
sealed class Requests : EventSource
{
    public static readonly Requests Log = new Requests();

    [Event(1)]
    public void RequestStart(int round) { WriteEvent(1, round); }

    [Event(2)]
    public void RequestStop(int round) { WriteEvent(2, round); }

    [Event(3)]
    public void AsyncRequestStart(int round) { WriteEvent(3, round); }

    [Event(4)]
    public void AsyncRequestStop(int round) { WriteEvent(4, round); }
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

    static async Task AsyncWorker(int first)
    {
        for (int round = first; ; round += 2)
        {
            Requests.Log.AsyncRequestStart(round);
            await Task.Delay(20);
            Requests.Log.AsyncRequestStop(round);
        }
    }

    static async Task Crossing(int round)
    {
        Requests.Log.AsyncRequestStart(round); // on the starter thread
        await Task.Delay(20).ConfigureAwait(false);
        Requests.Log.AsyncRequestStop(round); // on a pool thread
    }

    static void Starter()
    {
        for (int round = 1; ; round += 2)
            Crossing(round).Wait();
    }

    static int Main(string[] args)
    {
        var t = new Thread(Worker) { Name = "rtd-request-worker-thread" };
        File.WriteAllText(args[0] + ".tmp", Environment.ProcessId.ToString());
        File.Move(args[0] + ".tmp", args[0]);
        t.Start();
        _ = Task.Run(() => AsyncWorker(0));
        new Thread(Starter) { Name = "rtd-async-starter", IsBackground = true }.Start();
        t.Join();
        return 0;
    }
}
